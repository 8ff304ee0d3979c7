from cpumanager.core.cpuset import CPUSet


def test_round_trip_of_list_format() -> None:
    assert str(CPUSet.parse("3-6,1-5,8,10-11")) == "1-6,8,10-11"
