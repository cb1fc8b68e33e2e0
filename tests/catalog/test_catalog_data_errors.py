"""A hand-edited data file fails loudly, naming the JSON path of the bad value."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from wirespeed import catalog
from wirespeed.catalog import _load


@pytest.fixture
def patched_data(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """Serve mutable copies of the real data files; clear the load caches around the test."""
    files = {name: _load.read_data(name) for name in (_load.AZURE_FILE, _load.AWS_FILE, _load.DRIVERS_FILE)}
    served = copy.deepcopy(files)

    def clear() -> None:
        for fn in (_load.azure_types, _load.aws_types, _load.drivers, catalog._all, catalog._index):
            fn.cache_clear()

    clear()
    monkeypatch.setattr(_load, "read_data", lambda name: json.loads(json.dumps(served[name])))
    yield served
    clear()


@pytest.mark.parametrize(
    ("mutate", "load", "message"),
    [
        pytest.param(
            lambda d: d[_load.AZURE_FILE]["families"][0]["sizes"][1].update(vcpu=0),
            _load.azure_types,
            r"azure_sizes.json:families\[0\].sizes\[1\].vcpu: 0 is below the allowed minimum of 1",
            id="azure-vcpu-zero",
        ),
        pytest.param(
            lambda d: d[_load.AZURE_FILE]["families"][2].update(nic="intel"),
            _load.azure_types,
            r"azure_sizes.json:families\[2\].nic: 'intel' is not one of mana, mellanox-or-mana",
            id="azure-bad-nic",
        ),
        pytest.param(
            lambda d: d[_load.AWS_FILE]["instance_types"][0].update(baseline_gbps=99.0),
            _load.aws_types,
            r"aws_instance_types.json:instance_types\[0\].baseline_gbps: 99.0 exceeds burst_gbps 10.0",
            id="aws-baseline-above-burst",
        ),
        pytest.param(
            lambda d: d[_load.DRIVERS_FILE]["drivers"]["mana"]["rx"]["default_since"].update(kernel="six"),
            _load.drivers,
            r"nic_drivers.json:drivers.mana.rx.default_since.kernel: 'six' is not a kernel version like '6.13'",
            id="driver-default-since-kernel",
        ),
        pytest.param(
            lambda d: d[_load.DRIVERS_FILE]["drivers"]["mana"]["rx"]["default_since"].update(default=65536),
            _load.drivers,
            r"nic_drivers.json:drivers.mana.rx.default_since.default: 65536 is outside \[min, max\]",
            id="driver-default-since-out-of-range",
        ),
        pytest.param(
            lambda d: d[_load.DRIVERS_FILE]["drivers"]["mlx5_core"].update(notes=[""]),
            _load.drivers,
            r"nic_drivers.json:drivers.mlx5_core.notes\[0\]: '' is not a non-empty string",
            id="driver-empty-note",
        ),
        pytest.param(
            lambda d: d[_load.DRIVERS_FILE]["drivers"]["mana"]["rx"].update(max=6000),
            _load.drivers,
            r"nic_drivers.json:drivers.mana.rx.max: 6000 is not a value the up_power_of_two rule produces",
            id="driver-max-off-rule",
        ),
        pytest.param(
            lambda d: d[_load.DRIVERS_FILE]["drivers"]["ena"]["tx"].update(default=4096),
            _load.drivers,
            r"nic_drivers.json:drivers.ena.tx: expected min <= default <= max",
            id="driver-default-above-max",
        ),
        pytest.param(
            lambda d: d[_load.DRIVERS_FILE]["drivers"]["igb"].update(rounding="nearest"),
            _load.drivers,
            r"nic_drivers.json:drivers.igb.rounding: 'nearest' is not one of up_power_of_two",
            id="driver-bad-rounding",
        ),
    ],
)
def test_bad_data_names_the_field(patched_data: dict[str, Any], mutate, load, message: str) -> None:  # type: ignore[no-untyped-def]
    mutate(patched_data)
    with pytest.raises(catalog.CatalogDataError, match=message):
        load()


def test_colliding_names_are_refused(patched_data: dict[str, Any]) -> None:
    sizes = patched_data[_load.AZURE_FILE]["families"][0]["sizes"]
    sizes.append({**sizes[0], "name": sizes[0]["name"].upper().replace("STANDARD_", "Standard_")})
    with pytest.raises(catalog.CatalogDataError, match="collide as 'ds2_v2'"):  # Standard_DS2_v2, Dsv2's first size
        catalog.lookup("D2s_v6")
