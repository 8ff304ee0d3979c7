"""The kubelet's named test machines, as data (facts from its cpumanager unit tests).

Each entry: kubelet name -> (kebab-case alias, source test file, declared counters
(NumCPUs, NumCores, NumSockets, NumNUMANodes, NumUncoreCache) copied verbatim, and the
per-CPU columns core / socket / numa / uncore for CPUs 0..n-1). A column is a list of
arithmetic runs: ``v`` one value, ``v*n`` n copies, ``v+s*n`` n values from v in steps of s.
Decoded by :mod:`cpumanager.presets`.
"""

from __future__ import annotations

KUBELET_MACHINES: dict[
    str, tuple[str, str, tuple[int, int, int, int, int], tuple[str, str, str, str]]
] = {
    "topoSingleSocketHT": (
        "single-socket-ht",
        "policy_test.go",
        (8, 4, 1, 0, 0),
        (
            "0+1*4 0+1*4",
            "0*8",
            "0*8",
            "0*8",
        ),
    ),
    "topoDualSocketHT": (
        "dual-socket-ht",
        "policy_test.go",
        (12, 6, 2, 0, 1),
        (
            "0+1*6 0+1*6",
            "0+1*2 0+1*2 0+1*2 0+1*2 0+1*2 0+1*2",
            "0+1*2 0+1*2 0+1*2 0+1*2 0+1*2 0+1*2",
            "0*12",
        ),
    ),
    "topoUncoreDualSocketNoSMT": (
        "uncore-dual-socket-no-smt",
        "policy_test.go",
        (16, 16, 2, 0, 4),
        (
            "0+1*16",
            "0*8 1*8",
            "0*16",
            "0*4 1*4 2*4 3*4",
        ),
    ),
    "topoUncoreSingleSocketMultiNuma": (
        "uncore-single-socket-multi-numa",
        "policy_test.go",
        (16, 16, 1, 0, 4),
        (
            "0+1*16",
            "0*16",
            "0*8 1*8",
            "0*4 1*4 2*4 3*4",
        ),
    ),
    "topoUncoreSingleSocketSMT": (
        "uncore-single-socket-smt",
        "policy_test.go",
        (16, 8, 1, 0, 2),
        (
            "0+1*8 0+1*8",
            "0*16",
            "0*16",
            "0*4 1*4 0*4 1*4",
        ),
    ),
    "topoUncoreSingleSocketNoSMT": (
        "uncore-single-socket-no-smt",
        "policy_test.go",
        (16, 16, 1, 0, 4),
        (
            "0+1*16",
            "0*16",
            "0*16",
            "0*4 1*4 2*4 3*4",
        ),
    ),
    "topoDualSocketNoHT": (
        "dual-socket-no-ht",
        "policy_test.go",
        (8, 8, 2, 0, 0),
        (
            "0+1*8",
            "0*4 1*4",
            "0*4 1*4",
            "0*8",
        ),
    ),
    "topoTripleSocketHT": (
        "triple-socket-ht",
        "policy_test.go",
        (18, 9, 3, 0, 0),
        (
            "0*2 1*2 2*2 3*2 4*2 5*2 6*2 7*2 8*2",
            "1*6 0*6 2*6",
            "1*6 0*6 2*6",
            "0*18",
        ),
    ),
    "topoQuadSocketFourWayHT": (
        "quad-socket-four-way-ht",
        "policy_test.go",
        (288, 72, 4, 0, 0),
        (
            (
                "0+64*2 65+1*11 64+1*12 64+1*12 63+1*13 1+1*15 18+1*40 60+1*4 0+1*16 "
                "18+1*40 60+1*4 0+1*16 18+1*40 60+1*4 0+1*16 18+1*40 60+1*3"
            ),
            (
                "0*3 1*2 2*2 3*2 0*2 1*2 0*2 1*2 2*2 3*2 0*2 1*2 0*2 1*2 2*2 3*2 0*2 "
                "1*2 3-3*2 0+1*2 1+1*2 2+1*2 3-3*2 0+1*2 1-1*2 1*2 2*2 3*2 0*2 1*2 2*2 "
                "3*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 "
                "1*2 2*2 3*2 0*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 1*2 2*2 3*2 "
                "0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 "
                "2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 "
                "0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 2*2 3*2 0*2 1*2 "
                "2*2 3*2 0*2 1*2 2*2 3*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 "
                "0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 2*2 3"
            ),
            (
                "0*3 1*2 2*2 3*2 0*2 1*2 0*2 1*2 2*2 3*2 0*2 1*2 0*2 1*2 2*2 3*2 0*2 "
                "1*2 3-3*2 0+1*2 1+1*2 2+1*2 3-3*2 0+1*2 1-1*2 1*2 2*2 3*2 0*2 1*2 2*2 "
                "3*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 "
                "1*2 2*2 3*2 0*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 1*2 2*2 3*2 "
                "0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 "
                "2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 "
                "0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 2*2 3*2 0*2 1*2 "
                "2*2 3*2 0*2 1*2 2*2 3*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 "
                "0*2 1*2 2*2 3*2 0*2 1*2 2*2 3*2 0*2 2*2 3"
            ),
            "0*288",
        ),
    ),
    "topoDualSocketMultiNumaPerSocketHT": (
        "dual-socket-multi-numa-per-socket-ht",
        "policy_test.go",
        (80, 40, 2, 4, 0),
        (
            "0+1*40 0+1*40",
            "0*20 1*20 0*20 1*20",
            "0*10 1*10 2*10 3*10 0*10 1*10 2*10 3*10",
            "0*80",
        ),
    ),
    "fakeTopoMultiSocketDualSocketPerNumaHT": (
        "fake-multi-socket-dual-socket-per-numa-ht",
        "policy_test.go",
        (80, 40, 4, 2, 0),
        (
            "0+1*40 0+1*40",
            "0*10 1*10 2*10 3*10 0*10 1*10 2*10 3*10",
            "0*20 1*20 0*20 1*20",
            "0*80",
        ),
    ),
    "topoDualSocketMultiNumaPerSocketHTLarge": (
        "dual-socket-multi-numa-per-socket-ht-large",
        "policy_test.go",
        (256, 128, 2, 8, 0),
        (
            "0+1*128 0+1*128",
            "0*64 1*64 0*64 1*64",
            ("0*16 1*16 2*16 3*16 4*16 5*16 6*16 7*16 0*16 1*16 2*16 3*16 4*16 5*16 6*16 7*16"),
            "0*256",
        ),
    ),
    "topoDualSocketSingleNumaPerSocketSMTUncore": (
        "dual-socket-single-numa-per-socket-smt-uncore",
        "policy_test.go",
        (384, 192, 2, 2, 24),
        (
            "0+1*192 0+1*192",
            "0*96 1*96 0*96 1*96",
            "0*96 1*96 0*96 1*96",
            (
                "0*8 1*8 2*8 3*8 4*8 5*8 6*8 7*8 8*8 9*8 10*8 11*8 12*8 13*8 14*8 15*8 "
                "16*8 17*8 18*8 19*8 20*8 21*8 22*8 23*8 0*8 1*8 2*8 3*8 4*8 5*8 6*8 "
                "7*8 8*8 9*8 10*8 11*8 12*8 13*8 14*8 15*8 16*8 17*8 18*8 19*8 20*8 "
                "21*8 22*8 23*8"
            ),
        ),
    ),
    "topoSingleSocketSingleNumaPerSocketSMTSmallUncore": (
        "single-socket-single-numa-per-socket-smt-small-uncore",
        "policy_test.go",
        (128, 64, 1, 1, 16),
        (
            "0+1*64 0+1*64",
            "0*128",
            "0*128",
            (
                "0*4 1*4 2*4 3*4 4*4 5*4 6*4 7*4 8*4 9*4 10*4 11*4 12*4 13*4 14*4 15*4 "
                "0*4 1*4 2*4 3*4 4*4 5*4 6*4 7*4 8*4 9*4 10*4 11*4 12*4 13*4 14*4 15*4"
            ),
        ),
    ),
    "topoSingleSocketSingleNumaPerSocketNoSMTSmallUncore": (
        "single-socket-single-numa-per-socket-no-smt-small-uncore",
        "policy_test.go",
        (128, 64, 1, 1, 16),
        (
            "0+1*64",
            "0*64",
            "0*64",
            "0*4 1*4 2*4 3*4 4*4 5*4 6*4 7*4 8*4 9*4 10*4 11*4 12*4 13*4 14*4 15*4",
        ),
    ),
    "topoSmallDualSocketSingleNumaPerSocketNoSMTUncore": (
        "small-dual-socket-single-numa-per-socket-no-smt-uncore",
        "policy_test.go",
        (64, 64, 2, 2, 8),
        (
            "0+1*64",
            "0*32 1*32",
            "0*32 1*32",
            "0*8 1*8 2*8 3*8 4*8 5*8 6*8 7*8",
        ),
    ),
    "topoSmallSingleSocketSingleNumaPerSocketNoSMTUncore": (
        "small-single-socket-single-numa-per-socket-no-smt-uncore",
        "policy_test.go",
        (32, 32, 1, 1, 4),
        (
            "0+1*32",
            "0*32",
            "0*32",
            "0*8 1*8 2*8 3*8",
        ),
    ),
    "topoLargeSingleSocketSingleNumaPerSocketSMTUncore": (
        "large-single-socket-single-numa-per-socket-smt-uncore",
        "policy_test.go",
        (256, 128, 1, 1, 16),
        (
            "0+1*128 0+1*128",
            "0*256",
            "0*256",
            (
                "0*8 1*8 2*8 3*8 4*8 5*8 6*8 7*8 8*8 9*8 10*8 11*8 12*8 13*8 14*8 15*8 "
                "0*8 1*8 2*8 3*8 4*8 5*8 6*8 7*8 8*8 9*8 10*8 11*8 12*8 13*8 14*8 15*8"
            ),
        ),
    ),
    "topoDualSocketMultiNumaPerSocketUncore": (
        "dual-socket-multi-numa-per-socket-uncore",
        "policy_test.go",
        (192, 192, 2, 4, 24),
        (
            "0+1*96 0+1*96",
            "0*96 1*96",
            "0*48 1*48 2*48 3*48",
            (
                "0*8 1*8 2*8 3*8 4*8 5*8 6*8 7*8 8*8 9*8 10*8 11*8 12*8 13*8 14*8 15*8 "
                "16*8 17*8 18*8 19*8 20*8 21*8 22*8 23*8"
            ),
        ),
    ),
    "topoDualSocketSubNumaPerSocketHTMonolithicUncore": (
        "dual-socket-sub-numa-per-socket-ht-monolithic-uncore",
        "policy_test.go",
        (240, 120, 2, 4, 2),
        (
            "0+1*120 0+1*120",
            "0*60 1*60 0*60 1*60",
            "0*30 1*30 2*30 3*30 0*30 1*30 2*30 3*30",
            "0*60 1*60 0*60 1*60",
        ),
    ),
    "topoSingleSocketSingleNumaPerSocketPCoreHTMonolithicUncore": (
        "single-socket-single-numa-per-socket-p-core-ht-monolithic-uncore",
        "policy_test.go",
        (24, 16, 1, 1, 1),
        (
            "0+1*16 8+1*8",
            "0*24",
            "0*24",
            "0*24",
        ),
    ),
    "topoSingleSocketSingleNumaPerSocketPCoreHTECoreST": (
        "single-socket-single-numa-per-socket-p-core-ht-e-core-st",
        "policy_test.go",
        (28, 20, 1, 1, 0),
        (
            "0*2 4*2 8*2 12*2 16*2 20*2 24*2 28*2 32+1*12",
            "0*28",
            "0*28",
            "0*28",
        ),
    ),
    "topoLargeSingleSocketSingleNumaPerSocketUncore": (
        "large-single-socket-single-numa-per-socket-uncore",
        "policy_test.go",
        (128, 128, 1, 1, 16),
        (
            "0+1*128",
            "0*128",
            "0*128",
            "0*8 1*8 2*8 3*8 4*8 5*8 6*8 7*8 8*8 9*8 10*8 11*8 12*8 13*8 14*8 15*8",
        ),
    ),
    "topoSingleSocketSingleNumaPerSocketUncore": (
        "single-socket-single-numa-per-socket-uncore",
        "policy_test.go",
        (64, 64, 1, 1, 1),
        (
            "0+1*64",
            "0*64",
            "0*64",
            "0*64",
        ),
    ),
    "hintsTestMachineDiscovered": (
        "hints-test-machine-discovered",
        "topology_hints_test.go",
        (12, 6, 0, 2, 2),
        (
            "0+1*6 0+1*6",
            "0*3 1*3 0*3 1*3",
            "0*3 1*3 0*3 1*3",
            "0*3 1*3 0*3 1*3",
        ),
    ),
}
