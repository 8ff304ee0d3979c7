"""Release 1.32's feature gate registry, as data (pure).

Every gate the 1.32 kubelet registers (its own, the generic API server's, component-base
logging and client-go gates), one per line: ``Name version:level:default:lock ...`` with
the version history 1.32's versioned specs carry (level ``a`` alpha, ``b`` beta, ``g`` GA,
``d`` deprecated; default ``1`` on; ``L`` locked to its default). Gates registered without
a version (logging, client-go, ``AllAlpha``/``AllBeta``) carry ``1.0``: their history is not
recorded. Read by ``gates.py``.
"""

from __future__ import annotations

__all__ = ["SPECS_1_32"]

SPECS_1_32 = """
APIListChunking 1.8:a:0:- 1.9:b:1:- 1.29:g:1:L
APIResponseCompression 1.8:a:0:- 1.16:b:1:-
APIServerIdentity 1.20:a:0:- 1.26:b:1:-
APIServerTracing 1.22:a:0:- 1.27:b:1:-
APIServingWithRoutine 1.30:a:0:-
AdmissionWebhookMatchConditions 1.27:a:0:- 1.28:b:1:- 1.30:g:1:L
AggregatedDiscoveryEndpoint 1.26:a:0:- 1.27:b:1:- 1.30:g:1:L
AllAlpha 1.0:a:0:-
AllBeta 1.0:b:0:-
AllowDNSOnlyNodeCSR 1.31:d:0:-
AllowInsecureKubeletCertificateSigningRequests 1.31:d:0:-
AllowOverwriteTerminationGracePeriodSeconds 1.32:d:0:-
AllowServiceLBStatusOnNonLB 1.29:d:0:- 1.32:d:0:L
AllowUnsafeMalformedObjectDeletion 1.32:a:0:-
AnonymousAuthConfigurableEndpoints 1.31:a:0:- 1.32:b:1:-
AnyVolumeDataSource 1.18:a:0:- 1.24:b:1:-
AppArmor 1.4:b:1:- 1.31:g:1:L
AppArmorFields 1.30:b:1:- 1.31:g:1:L
AuthorizeNodeWithSelectors 1.31:a:0:- 1.32:b:1:-
AuthorizeWithSelectors 1.31:a:0:- 1.32:b:1:-
BtreeWatchCache 1.32:b:1:-
CBORServingAndStorage 1.32:a:0:-
CPUManager 1.8:a:0:- 1.10:b:1:- 1.26:g:1:L
CPUManagerPolicyAlphaOptions 1.23:a:0:-
CPUManagerPolicyBetaOptions 1.23:b:1:-
CPUManagerPolicyOptions 1.22:a:0:- 1.23:b:1:-
CRDValidationRatcheting 1.28:a:0:- 1.30:b:1:-
CSIMigrationPortworx 1.23:a:0:- 1.25:b:0:- 1.31:b:1:-
CSIVolumeHealth 1.21:a:0:-
ClientsAllowCBOR 1.0:a:0:-
ClientsPreferCBOR 1.0:a:0:-
CloudControllerManagerWebhook 1.27:a:0:-
ClusterTrustBundle 1.27:a:0:-
ClusterTrustBundleProjection 1.29:a:0:-
ComponentFlagz 1.32:a:0:-
ComponentStatusz 1.32:a:0:-
ConcurrentWatchObjectDecode 1.31:b:0:-
ConsistentListFromCache 1.28:a:0:- 1.31:b:1:-
ContainerCheckpoint 1.25:a:0:- 1.30:b:1:-
ContextualLogging 1.0:b:1:-
CoordinatedLeaderElection 1.31:a:0:-
CronJobsScheduledAnnotation 1.28:b:1:- 1.32:g:1:L
CrossNamespaceVolumeDataSource 1.26:a:0:-
CustomCPUCFSQuotaPeriod 1.12:a:0:-
CustomResourceFieldSelectors 1.30:a:0:- 1.31:b:1:- 1.32:g:1:L
DRAAdminAccess 1.32:a:0:-
DRAResourceClaimDeviceStatus 1.32:a:0:-
DevicePluginCDIDevices 1.28:a:0:- 1.29:b:1:- 1.31:g:1:L
DisableAllocatorDualWrite 1.31:a:0:-
DisableCSIVolumePlugin 1.31:a:0:-
DisableCloudProviders 1.22:a:0:- 1.29:b:1:- 1.31:g:1:L
DisableKubeletCloudCredentialProviders 1.23:a:0:- 1.29:b:1:- 1.31:g:1:L
DisableNodeKubeProxyVersion 1.29:a:0:- 1.31:d:0:-
DynamicResourceAllocation 1.26:a:0:- 1.32:b:0:-
EfficientWatchResumption 1.20:a:0:- 1.21:b:1:- 1.24:g:1:L
ElasticIndexedJob 1.27:b:1:- 1.31:g:1:L
EventedPLEG 1.26:a:0:-
ExecProbeTimeout 1.20:g:1:-
ExternalServiceAccountTokenSigner 1.32:a:0:-
GracefulNodeShutdown 1.20:a:0:- 1.21:b:1:-
GracefulNodeShutdownBasedOnPodPriority 1.23:a:0:- 1.24:b:1:-
HPAScaleToZero 1.16:a:0:-
HonorPVReclaimPolicy 1.23:a:0:- 1.31:b:1:-
ImageMaximumGCAge 1.29:a:0:- 1.30:b:1:-
ImageVolume 1.31:a:0:-
InPlacePodVerticalScaling 1.27:a:0:-
InPlacePodVerticalScalingAllocatedStatus 1.32:a:0:-
InPlacePodVerticalScalingExclusiveCPUs 1.32:a:0:-
InTreePluginPortworxUnregister 1.23:a:0:-
InformerResourceVersion 1.0:a:0:-
JobBackoffLimitPerIndex 1.28:a:0:- 1.29:b:1:-
JobManagedBy 1.30:a:0:- 1.32:b:1:-
JobPodFailurePolicy 1.25:a:0:- 1.26:b:1:- 1.31:g:1:L
JobPodReplacementPolicy 1.28:a:0:- 1.29:b:1:-
JobSuccessPolicy 1.30:a:0:- 1.31:b:1:-
KMSv1 1.28:d:1:- 1.29:d:0:-
KubeProxyDrainingTerminatingNodes 1.28:a:0:- 1.30:b:1:- 1.31:g:1:L
KubeletCgroupDriverFromCRI 1.28:a:0:- 1.31:b:1:-
KubeletCrashLoopBackOffMax 1.32:a:0:-
KubeletFineGrainedAuthz 1.32:a:0:-
KubeletInUserNamespace 1.22:a:0:-
KubeletPodResources 1.31:a:0:-
KubeletPodResourcesDynamicResources 1.27:a:0:-
KubeletPodResourcesGet 1.27:a:0:-
KubeletRegistrationGetOnExistsOnly 1.32:d:0:-
KubeletSeparateDiskGC 1.29:a:0:- 1.31:b:1:-
KubeletTracing 1.25:a:0:- 1.27:b:1:-
LoadBalancerIPMode 1.29:a:0:- 1.30:b:1:- 1.32:g:1:L
LocalStorageCapacityIsolationFSQuotaMonitoring 1.15:a:0:- 1.31:b:0:-
LogarithmicScaleDown 1.21:a:0:- 1.22:b:1:- 1.31:g:1:L
LoggingAlphaOptions 1.0:a:0:-
LoggingBetaOptions 1.0:b:1:-
MatchLabelKeysInPodAffinity 1.29:a:0:- 1.31:b:1:-
MatchLabelKeysInPodTopologySpread 1.25:a:0:- 1.27:b:1:-
MaxUnavailableStatefulSet 1.24:a:0:-
MemoryManager 1.21:a:0:- 1.22:b:1:- 1.32:g:1:L
MemoryQoS 1.22:a:0:-
MultiCIDRServiceAllocator 1.27:a:0:- 1.31:b:0:-
MutatingAdmissionPolicy 1.32:a:0:-
NFTablesProxyMode 1.29:a:0:- 1.31:b:1:-
NodeInclusionPolicyInPodTopologySpread 1.25:a:0:- 1.26:b:1:-
NodeLogQuery 1.27:a:0:- 1.30:b:0:-
NodeSwap 1.22:a:0:- 1.28:b:0:- 1.30:b:1:-
OpenAPIEnums 1.23:a:0:- 1.24:b:1:-
OrderedNamespaceDeletion 1.30:b:0:-
PDBUnhealthyPodEvictionPolicy 1.26:a:0:- 1.27:b:1:- 1.31:g:1:L
PersistentVolumeLastPhaseTransitionTime 1.28:a:0:- 1.29:b:1:- 1.31:g:1:L
PodAndContainerStatsFromCRI 1.23:a:0:-
PodDeletionCost 1.21:a:0:- 1.22:b:1:-
PodDisruptionConditions 1.25:a:0:- 1.26:b:1:- 1.31:g:1:L
PodIndexLabel 1.28:b:1:- 1.32:g:1:L
PodLevelResources 1.32:a:0:-
PodLifecycleSleepAction 1.29:a:0:- 1.30:b:1:-
PodLifecycleSleepActionAllowZero 1.32:a:0:-
PodLogsQuerySplitStreams 1.32:a:0:-
PodReadyToStartContainersCondition 1.28:a:0:- 1.29:b:1:-
PodSchedulingReadiness 1.26:a:0:- 1.27:b:1:- 1.30:g:1:L
PortForwardWebsockets 1.30:a:0:- 1.31:b:1:-
ProcMountType 1.12:a:0:- 1.31:b:0:-
QOSReserved 1.11:a:0:-
RecoverVolumeExpansionFailure 1.23:a:0:- 1.32:b:1:-
RecursiveReadOnlyMounts 1.30:a:0:- 1.31:b:1:-
RelaxedDNSSearchValidation 1.32:a:0:-
RelaxedEnvironmentVariableValidation 1.30:a:0:- 1.32:b:1:-
ReloadKubeletServerCertificateFile 1.31:b:1:-
RemainingItemCount 1.15:a:0:- 1.16:b:1:- 1.29:g:1:L
RemoteRequestHeaderUID 1.32:a:0:-
ResilientWatchCacheInitialization 1.31:b:1:-
ResourceHealthStatus 1.31:a:0:-
RetryGenerateName 1.30:a:0:- 1.31:b:1:- 1.32:g:1:L
RotateKubeletServerCertificate 1.7:a:0:- 1.12:b:1:-
RuntimeClassInImageCriApi 1.29:a:0:-
SELinuxChangePolicy 1.32:a:0:-
SELinuxMount 1.30:a:0:-
SELinuxMountReadWriteOncePod 1.25:a:0:- 1.27:b:0:- 1.28:b:1:-
SchedulerAsyncPreemption 1.32:a:0:-
SchedulerQueueingHints 1.28:b:0:- 1.32:b:1:-
SeparateCacheWatchRPC 1.28:b:1:-
SeparateTaintEvictionController 1.29:b:1:-
ServiceAccountNodeAudienceRestriction 1.32:b:0:-
ServiceAccountTokenJTI 1.29:a:0:- 1.30:b:1:- 1.32:g:1:L
ServiceAccountTokenNodeBinding 1.29:a:0:- 1.31:b:1:-
ServiceAccountTokenNodeBindingValidation 1.29:a:0:- 1.30:b:1:- 1.32:g:1:L
ServiceAccountTokenPodNodeInfo 1.29:a:0:- 1.30:b:1:- 1.32:g:1:L
ServiceTrafficDistribution 1.30:a:0:- 1.31:b:1:-
SidecarContainers 1.28:a:0:- 1.29:b:1:-
SizeMemoryBackedVolumes 1.20:a:0:- 1.22:b:1:- 1.32:g:1:L
StatefulSetAutoDeletePVC 1.23:a:0:- 1.27:b:1:- 1.32:g:1:L
StatefulSetStartOrdinal 1.26:a:0:- 1.27:b:1:- 1.31:g:1:L
StorageNamespaceIndex 1.30:b:1:-
StorageVersionAPI 1.20:a:0:-
StorageVersionHash 1.14:a:0:- 1.15:b:1:-
StorageVersionMigrator 1.30:a:0:-
StrictCostEnforcementForVAP 1.30:b:0:- 1.32:g:1:L
StrictCostEnforcementForWebhooks 1.30:b:0:- 1.32:g:1:L
StructuredAuthenticationConfiguration 1.29:a:0:- 1.30:b:1:-
StructuredAuthorizationConfiguration 1.29:a:0:- 1.30:b:1:- 1.32:g:1:L
SupplementalGroupsPolicy 1.31:a:0:-
SystemdWatchdog 1.32:b:1:-
TopologyAwareHints 1.21:a:0:- 1.23:b:0:- 1.24:b:1:-
TopologyManagerPolicyAlphaOptions 1.26:a:0:-
TopologyManagerPolicyBetaOptions 1.26:b:0:- 1.28:b:1:-
TopologyManagerPolicyOptions 1.26:a:0:- 1.28:b:1:- 1.32:g:1:-
TranslateStreamCloseWebsocketRequests 1.29:a:0:- 1.30:b:1:-
UnauthenticatedHTTP2DOSMitigation 1.25:b:0:- 1.29:b:1:-
UnknownVersionInteroperabilityProxy 1.28:a:0:-
UserNamespacesPodSecurityStandards 1.29:a:0:-
UserNamespacesSupport 1.25:a:0:- 1.30:b:0:-
VolumeAttributesClass 1.29:a:0:- 1.31:b:0:-
VolumeCapacityPriority 1.21:a:0:-
WatchBookmark 1.15:a:0:- 1.16:b:1:- 1.17:g:1:L
WatchCacheInitializationPostStartHook 1.31:b:0:-
WatchFromStorageWithoutResourceVersion 1.27:b:0:-
WatchList 1.27:a:0:- 1.32:b:1:-
WatchListClient 1.0:b:0:-
WinDSR 1.14:a:0:-
WinOverlay 1.14:a:0:- 1.20:b:1:-
WindowsCPUAndMemoryAffinity 1.32:a:0:-
WindowsGracefulNodeShutdown 1.32:a:0:-
WindowsHostNetwork 1.26:a:1:-
"""
