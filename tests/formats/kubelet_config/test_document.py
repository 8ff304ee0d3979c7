"""A configuration file decoded as the kubelet's loader decodes it (document.py).

Expected texts are 1.32's loader and codec (``kubeletconfig/configfiles``,
``kubeletconfig/util/codec`` over the scheme's universal decoder) on the same bytes.
"""

from __future__ import annotations

import pytest

from cpumanager.adapters.kubelet_config_file import parse_yaml_keeping_duplicates
from cpumanager.errors import KubeletConfigInvalidError
from cpumanager.formats.kubelet_config.document import LoadedDocument, decode_drop_in
from cpumanager.formats.kubelet_config.document import decode_file as decode


def decode_file(text: str, *, path: str) -> LoadedDocument:
    return decode(text, path=path, parse_yaml=parse_yaml_keeping_duplicates)


HEAD = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
WRAP = (
    "failed to load kubelet config file, path: k.yaml, error: failed to load Kubelet config "
    "file k.yaml, error "
)
NO_KIND = 'failed to decode: no kind "'
JSON_PARSE = "failed to decode: couldn't get version/kind; json parse error: "
SCHEME = 'in scheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme/scheme.go:33"'
TYPEMETA = (
    'Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; '
    'Kind string "json:\\"kind,omitempty\\"" }'
)

REFUSED = [
    ("", 'kubelet config file "k.yaml" was empty'),
    ("# only a comment\n", "failed to decode: Object 'Kind' is missing in '# only a comment\n'"),
    ("   \n", "failed to decode: Object 'Kind' is missing in '   \n'"),
    (
        "{apiVersion: kubelet.config.k8s.io/v1beta1, kind: KubeletConfiguration}\n",
        "failed to decode: couldn't get version/kind; json parse error: invalid character 'a' "
        "looking for beginning of object key string",
    ),
    (
        '{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}\n'
        "maxPods: 3\n",
        "failed to decode: couldn't get version/kind; json parse error: invalid character 'm' "
        "after top-level value",
    ),
    (
        '{"kind": "KubeletConfiguration", ',
        "failed to decode: couldn't get version/kind; json parse error: unexpected end of JSON "
        "input",
    ),
    (
        "kind: KubeletConfiguration\n",
        "failed to decode: Object 'apiVersion' is missing in 'kind: KubeletConfiguration\n'",
    ),
    (
        "apiVersion: kubelet.config.k8s.io/v1beta1\n",
        "failed to decode: Object 'Kind' is missing in "
        "'apiVersion: kubelet.config.k8s.io/v1beta1\n'",
    ),
    (
        "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n",
        'failed to decode: no kind "KubeletConfiguration" is registered for version '
        f'"kubelet.config.k8s.io/v1" {SCHEME}',
    ),
    (
        "apiVersion: foo/v1beta1\nkind: KubeletConfiguration\n",
        NO_KIND + f'KubeletConfiguration" is registered for version "foo/v1beta1" {SCHEME}',
    ),
    (
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: Kubelet\n",
        NO_KIND + f'Kubelet" is registered for version "kubelet.config.k8s.io/v1beta1" {SCHEME}',
    ),
    (
        "- a\n- b\n",
        JSON_PARSE + f"json: cannot unmarshal array into {TYPEMETA}",
    ),
    (
        "hello\n",
        JSON_PARSE + f"json: cannot unmarshal string into {TYPEMETA}",
    ),
]


# measured on 1.32 with random files (bench/diff_kubelet_config.py), shrunk: go-yaml's words
# and line numbers (its scanner counts from 1 and ends the last line at the end of the
# stream), what the YAML-to-JSON conversion refuses, and Go's JSON scanner
REFUSED += [
    (
        HEAD + "maxPods: 5\nfeatureGat",
        "failed to decode: yaml: line 5: could not find expected ':'",
    ),
    (
        HEAD + "maxPods: 5\nx: a: b\n",
        "failed to decode: yaml: line 4: mapping values are not allowed in this context",
    ),
    (
        HEAD + "\tmaxPods: 1\n",
        "failed to decode: yaml: line 3: found a tab character that violates indentation",
    ),
    (HEAD + "[1, 2]: x\n", "failed to decode: yaml: invalid map key: []interface {}{1, 2}"),
    (
        HEAD + "null: x\n",
        'failed to decode: unsupported map key of type: %!s(<nil>), key: <nil>, value: "x"',
    ),
    (HEAD + "maxPods: .inf\n", "failed to decode: json: unsupported value: +Inf"),
    (
        "apiVersion: kubelet.config.k8s.io/\nkind: KubeletConfiguration\n",
        "failed to decode: Object 'apiVersion' is missing in 'apiVersion: kubelet.config.k8s.io/"
        "\nkind: KubeletConfiguration\n'",
    ),
    (HEAD + "cgroupRoot: '", "failed to decode: yaml: line 3: found unexpected end of stream"),
    (
        "apiVersion: kubelet.config.k8s.io/v1beta1\nKIND: Pod\n",  # the type meta folds case
        NO_KIND + f'Pod" is registered for version "kubelet.config.k8s.io/v1beta1" {SCHEME}',
    ),
    ('{"', JSON_PARSE + "unexpected end of JSON input"),
    ('{"systemReserved":{"pid": tr', JSON_PARSE + "unexpected end of JSON input"),
    ('{"a": fals }', JSON_PARSE + "invalid character ' ' in literal false (expecting 'e')"),
    (
        HEAD + "enforceNodeAllocatable:\n- none\n\tmaxPods: 1\n",
        "failed to decode: yaml: line 5: found a tab character that violates indentation",
    ),
    (
        HEAD + "reservedMemory:\n- numaNode: 0\n\tmaxPods: 1\n",
        "failed to decode: yaml: line 5: found a tab character that violates indentation",
    ),
    ('{"httpCheckFrequency": 1.', JSON_PARSE + "unexpected end of JSON input"),
    (HEAD + "maxPods: *nope\n", "failed to decode: yaml: unknown anchor 'nope' referenced"),
    (HEAD + 'podCIDR: "\\q"\n', "failed to decode: yaml: line 3: found unknown escape character"),
    (
        HEAD + "clusterDNS: [a, b\n  : x\n",
        "failed to decode: yaml: line 3: did not find expected ',' or ']'",
    ),
    (
        HEAD + "evictionHard:\ncpuManagerPolicy:\tstatic\n  nodefs.available: 10%\n",
        "failed to decode: yaml: line 5: mapping values are not allowed in this context",
    ),
    ('{"maxPods": [1 2]}', JSON_PARSE + "invalid character '2' after array element"),
    # Go's encoding/json as the kubelet is built (v1; a go1.25+ jsonv2 build says "in string")
    ('{"podCIDR": "a\nb"}', JSON_PARSE + "invalid character '\\n' in string literal"),
    ('{"maxPods": NaN}', JSON_PARSE + "invalid character 'N' looking for beginning of value"),
    ('{"maxPods": -Infinity}', JSON_PARSE + "invalid character 'I' in numeric literal"),
    (
        '{"maxPods": 1.}',
        JSON_PARSE + "invalid character '}' after decimal point in numeric literal",
    ),
]


@pytest.mark.parametrize(("text", "detail"), REFUSED)
def test_refused_while_loading(text: str, detail: str) -> None:
    with pytest.raises(KubeletConfigInvalidError) as caught:
        decode_file(text, path="k.yaml")
    assert caught.value.stage == "loads"
    assert caught.value.errors == (WRAP + detail,)


ACCEPTED = [
    (HEAD, {}, ()),
    ('{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}', {}, ()),
    (
        HEAD + "maxPods: 10\nmaxPods: 20\nmaxPods: 30\n",
        {"maxPods": 30},
        (
            "Using lenient decoding as strict decoding failed: strict decoding error: yaml: "
            'unmarshal errors:\n  line 4: key "maxPods" already set in map\n  line 5: key '
            '"maxPods" already set in map',
        ),
    ),
    (
        '{"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1", '
        '"maxPods": 10, "maxPods": 20}',
        {"maxPods": 20},
        (
            "Using lenient decoding as strict decoding failed: strict decoding error: "
            'duplicate field "maxPods"',
        ),
    ),
    (
        HEAD + "MaxPods: 5\n",  # field names are case-sensitive: an unknown field
        {"MaxPods": 5},
        (
            "Using lenient decoding as strict decoding failed: strict decoding error: "
            'unknown field "MaxPods"',
        ),
    ),
    (HEAD + "---\nmaxPods: 3\n", {}, ()),  # the first document is the file
    (HEAD + "maxPods:\t3\n", {"maxPods": 3}, ()),  # go-yaml takes the tab for a blank
    (HEAD + "cpuManagerReconcilePeriod: -5s\n", {"cpuManagerReconcilePeriod": "-5s"}, ()),
]


# measured: go-yaml v2 reads plain scalars its own way; keys become JSON strings; a JSON
# key given twice decodes the second object into the first
ACCEPTED += [
    (
        HEAD + "failSwapOn: n\nmaxPods: 0x10\npodsPerCore: 017\nimageGCHighThresholdPercent: 0o17"
        "\nkubeAPIBurst: 1_000\noomScoreAdj: 1e2\nclusterDomain: 2001-12-14\n",
        {
            "failSwapOn": False,
            "maxPods": 16,
            "podsPerCore": 15,
            "imageGCHighThresholdPercent": 15,
            "kubeAPIBurst": 1000,
            "oomScoreAdj": 100.0,
            "clusterDomain": "2001-12-14",
        },
        (),
    ),
    (HEAD + "cpuManagerPolicy: static\t\n", {"cpuManagerPolicy": "static"}, ()),
    (HEAD + "featureGates:\n  true: x\n  1: y\n", {"featureGates": {"true": "x", "1": True}}, ()),
    (
        '{"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1", '
        '"topologyManagerPolicyOptions": {"a": "1"}, "topologyManagerPolicyOptions": {"b": "2"}}',
        {"topologyManagerPolicyOptions": {"a": "1", "b": "2"}},
        (
            "Using lenient decoding as strict decoding failed: strict decoding error: "
            'duplicate field "topologyManagerPolicyOptions"',
        ),
    ),
]


# measured: the strict decoder's complaints in its order (nested unknown fields with their
# paths; a JSON file's unknown field once, a known one given again; a YAML repeat names the
# line of the value given again, the unknown fields follow it)
LENIENT = "Using lenient decoding as strict decoding failed: strict decoding error: "
ACCEPTED += [
    (
        HEAD + "reservedMemory: [{numaNode: 0, extra: 1}]\nlogging: {bogus: 1, options: "
        "{json: {x: 1}}}\nZ: 1\n",
        {
            "reservedMemory": [{"numaNode": 0, "extra": 1}],
            "logging": {"bogus": 1, "options": {"json": {"x": 1}}},
            "Z": 1,
        },
        (
            LENIENT + 'unknown field "Z", unknown field "logging.bogus", unknown field '
            '"logging.options.json.x", unknown field "reservedMemory[0].extra"',
        ),
    ),
    (
        '{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","a":1,'
        '"a":2,"maxPods":1,"maxPods":2,"maxPods":3}',
        {"a": 2, "maxPods": 3},
        (LENIENT + 'unknown field "a", duplicate field "maxPods"',),
    ),
    (
        HEAD + "maxPods: 1\nmaxPods: 2\nfoo: 1\nkubeReserved:\n  cpu: 1m\nkubeReserved:\n"
        "  cpu: 2m\n",
        {"maxPods": 2, "foo": 1, "kubeReserved": {"cpu": "2m"}},
        (
            LENIENT + 'yaml: unmarshal errors:\n  line 4: key "maxPods" already set in map\n'
            '  line 9: key "kubeReserved" already set in map, unknown field "foo"',
        ),
    ),
]


@pytest.mark.parametrize(("text", "fields", "warnings"), ACCEPTED)
def test_accepted(text: str, fields: dict[str, object], warnings: tuple[str, ...]) -> None:
    loaded = decode_file(text, path="k.yaml")
    body = {k: v for k, v in loaded.body.items() if k not in ("apiVersion", "kind")}
    assert body == fields
    assert loaded.warnings == warnings


DROP_IN_WRAP = (
    'failed to merge kubelet configs: failed to walk through kubelet dropin directory "d": '
    "failed to load kubelet dropin file, path: d/x.conf"
)
# 1.32's mergeKubeletConfigurations over its loader's LoadIntoJSON, on the same bytes
DROP_INS_REFUSED = [
    ("", ', error: kubelet config file "d/x.conf" was empty'),
    ("maxPods: 5\n", ", error: Object 'Kind' is missing in 'maxPods: 5\n'"),
    ("# c\n", ", error: Object 'Kind' is missing in '# c\n'"),
    (
        "{maxPods: 5}\n",
        ", error: couldn't get version/kind; json parse error: invalid character 'm' looking "
        "for beginning of object key string",
    ),
    (
        HEAD + "maxPods: 5\nmaxPods: 6\n",
        ', error: strict decoding error: yaml: unmarshal errors:\n  line 4: key "maxPods" '
        "already set in map",
    ),
    (
        "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n",
        ", unknown apiVersion/kind: kubelet.config.k8s.io/v1, Kind=KubeletConfiguration",
    ),
    ("kind: KubeletConfiguration\n", ", unknown apiVersion/kind: /, Kind=KubeletConfiguration"),
    ("apiVersion: v1\nkind: Pod\n", ", unknown apiVersion/kind: /v1, Kind=Pod"),
    # measured on the loader with random files (bench/diff_kubelet_config.py --drop-ins)
    (HEAD + "maxPods: [1\n", ", error: yaml: line 3: did not find expected ',' or ']'"),
    (
        '{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":3}',
        ", error: couldn't get version/kind; json parse error: json: cannot unmarshal number "
        "into Go struct field .kind of type string",
    ),
    (
        '{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration",'
        '"maxPods":1,"maxPods":2,"maxPods":3}',  # named once
        ', error: strict decoding error: duplicate field "maxPods"',
    ),
    (
        "[]\n",
        ", error: " + JSON_PARSE.removeprefix("failed to decode: ") + "json: cannot "
        f"unmarshal array into {TYPEMETA}",
    ),
    (
        '{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","a":1e400}',
        ", error: json: cannot unmarshal number 1e400 into Go value of type float64",
    ),
]


@pytest.mark.parametrize(("text", "detail"), DROP_INS_REFUSED)
def test_drop_ins_refused_while_loading(text: str, detail: str) -> None:
    with pytest.raises(KubeletConfigInvalidError) as caught:
        decode_drop_in(
            text, path="d/x.conf", directory="d", parse_yaml=parse_yaml_keeping_duplicates
        )
    assert caught.value.stage == "loads"
    assert caught.value.errors == (DROP_IN_WRAP + detail,)


def test_a_drop_in_is_decoded_without_defaults() -> None:
    loaded = decode_drop_in(
        HEAD + "maxPods: many\n",  # types are checked once merged
        path="d/x.conf",
        directory="d",
        parse_yaml=parse_yaml_keeping_duplicates,
    )
    assert loaded.body["maxPods"] == "many"


def test_a_field_newer_than_the_release_is_unknown_to_it() -> None:
    text = HEAD + "mergeDefaultEvictionSettings: true\n"  # 1.34's; measured on 1.32
    loaded = decode(text, path="k.yaml", parse_yaml=parse_yaml_keeping_duplicates, release=(1, 32))
    assert loaded.warnings == (LENIENT + 'unknown field "mergeDefaultEvictionSettings"',)
    assert decode_file(text, path="k.yaml").warnings == ()
