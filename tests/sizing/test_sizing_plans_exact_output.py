"""The sizing plans' whole output, edge by edge: every key of to_json(), every line of explain(), every error text.

Front ends print these verbatim (``wirespeed size ... --json``, plan tables), so a renamed key or a wrong unit is a
break for users; each expected value below is worked out by hand in the comment beside it.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest

from wirespeed import catalog
from wirespeed.sizing import SizingError, aks_sysctls, plan_backlog, plan_rings
from wirespeed.sizing.backlog import BacklogPlan
from wirespeed.sizing.errors import InfeasibleError
from wirespeed.sizing.exact import check_decimal, decimal_text, exact
from wirespeed.sizing.line_rate import assumed, declared, derivation, of_size
from wirespeed.sizing.packets import next_power_of_two
from wirespeed.sizing.rings import RingPlan, smallest_accepted


def test_backlog_plan_json_and_explanation_at_100g_on_any_cloud():
    plan = plan_backlog(100)
    # 100e9 / (1,538 B x 8) x 4 ms = 32,509.75 -> 32,510 packets; next power of two 32,768; each costs 1,500 B of
    # data + 576 B of skb overhead: 32,768 x 2,076 = 68,026,368 B = 64.875 MiB.
    assert plan.to_json() == {
        "netdev_max_backlog": 32_768,
        "packets_in_stall": 32_510,
        "capped_at_aks_max": False,
        "memory_bytes_per_cpu": 68_026_368,
    }
    assert plan.explain().splitlines() == [
        "At 100 Gb/s with 1,500-byte packets, 32,510 packets arrive while the backlog waits 4 ms to be drained.",
        "net.core.netdev_max_backlog = 32,768 (kernel default 1,000; 32,510 rounded up to a power of two, within "
        "1,000..3,240,000, the range AKS accepts; on AWS the kernel's int range applies).",
        "Worst case a full backlog pins 64.9 MiB per CPU; it is only used during bursts. A larger backlog absorbs "
        "microbursts; it cannot rescue sustained overload.",
    ]


def test_backlog_plan_json_on_azure_and_aws_name_whose_maximum_caps_it():
    assert plan_backlog(100, cloud="azure").to_json() == {
        "netdev_max_backlog": 32_768,
        "packets_in_stall": 32_510,
        "capped_at_aks_max": False,
        "memory_bytes_per_cpu": 68_026_368,
    }
    assert plan_backlog(100, cloud="aws").to_json() == {
        "netdev_max_backlog": 32_768,
        "packets_in_stall": 32_510,
        "capped_at_kernel_max": False,
        "memory_bytes_per_cpu": 68_026_368,
    }


def test_a_stall_the_kernel_default_holds_keeps_the_kernel_default():
    # 2e9 / 12,304 x 4 ms = 650.2 -> 651 packets: 1,000 holds them, so the plan is the kernel default (issue 25: it
    # said 1,024, and the gate then failed a backlog of 1,000 that holds the stall).
    plan = plan_backlog(2, cloud="azure")
    assert (plan.packets_in_stall, plan.netdev_max_backlog) == (651, 1_000)
    assert plan.memory_bytes_per_cpu == 1_000 * (1_500 + 576)
    assert plan.explain().splitlines()[1] == (
        "net.core.netdev_max_backlog = 1,000 (kernel default 1,000; the stall fits in the kernel default, AKS's "
        "minimum 1,000)."
    )


def test_a_stall_just_above_the_kernel_default_is_rounded_up_to_a_power_of_two():
    # 3.077 Gb/s x 4 ms / 12,304 bits = 1,000.3 -> 1,001 packets: one more than the default holds.
    plan = plan_backlog(Decimal("3.077"), cloud="azure")
    assert (plan.packets_in_stall, plan.netdev_max_backlog) == (1_001, 1_024)
    assert plan.explain().splitlines()[1] == (
        "net.core.netdev_max_backlog = 1,024 (kernel default 1,000; 1,001 rounded up to a power of two, within "
        "AKS's 1,000..3,240,000)."
    )


def test_a_capped_aws_backlog_names_the_kernels_int_maximum():
    # No valid input reaches 2**31 - 1 today (800 Gb/s of 64-byte packets for 1 s is 980,392,157 < 2**30), so the
    # plan is built directly: the text must still name the kernel's maximum, not AKS's, if the limits ever move.
    plan = BacklogPlan(
        line_rate_gbps=800.0,
        stall_ms=4_000.0,
        packet_bytes=64,
        packets_in_stall=3_921_568_628,
        netdev_max_backlog=2**31 - 1,
        capped=True,
        memory_bytes_per_cpu=0,
        cloud="aws",
    )
    assert plan.explain().splitlines()[1] == (
        "net.core.netdev_max_backlog = 2,147,483,647 (kernel default 1,000; capped at the kernel's int maximum "
        "2,147,483,647, below the 3,921,568,628 the stall needs: it holds only 2.2e+03 ms at this rate)."
    )
    assert plan.to_json()["capped_at_kernel_max"] is True


def test_ring_plan_is_exactly_the_drivers_numbers():
    # mlx5_core at 100 Gb/s: 8,128 packets in 1 ms, rounded up to 8,192 (its max) for RX and TX; 2,048-byte RX
    # buffers on 4 queues: 8,192 x 2,048 x 4 = 64 MiB against 1,024 x 2,048 x 4 = 8 MiB by default.
    plan = plan_rings("mlx5_core", 100, queues=4)
    assert plan == RingPlan(
        driver="mlx5_core",
        line_rate_gbps=100.0,
        stall_ms=1.0,
        packet_bytes=1_500,
        queues=4,
        packets_in_stall=8_128,
        rx=8_192,
        tx=8_192,
        rx_capped=False,
        tx_capped=False,
        rx_default=1_024,
        tx_default=1_024,
        memory_bytes=67_108_864,
        default_memory_bytes=8_388_608,
        default_note="",
    )
    assert plan.to_json() == {
        "driver": "mlx5_core",
        "rx": 8_192,
        "tx": 8_192,
        "rx_default": 1_024,
        "tx_default": 1_024,
        "packets_in_stall": 8_128,
        "rx_capped_at_driver_max": False,
        "tx_capped_at_driver_max": False,
        "queues": 4,
        "memory_bytes": 67_108_864,
        "extra_memory_bytes": 58_720_256,
    }
    assert plan.explain().splitlines() == [
        "At 100 Gb/s with 1,500-byte packets, 8,128 packets arrive during a 1 ms receive stall.",
        "mlx5_core: RX 8,192 (default 1,024), TX 8,192 (default 1,024): the smallest sizes the driver accepts "
        "that hold them, never below its defaults.",
        "Kernel memory for RX buffers on 4 queue(s): 64.0 MiB (+56.0 MiB over the defaults).",
    ]


def test_ring_queue_count_out_of_range_names_the_field():
    with pytest.raises(SizingError) as info:
        plan_rings("mlx5_core", 100, queues=0)
    assert str(info.value) == "queues: 0 is not allowed: must be a whole number between 1 and 512"


def test_a_ring_exactly_the_packets_needed_is_not_capped():
    mlx5 = catalog.nic_driver("mlx5_core")
    assert smallest_accepted(mlx5, "rx", 1_024) == (1_024, False)
    assert smallest_accepted(mlx5, "rx", 8_192) == (8_192, False)
    assert smallest_accepted(mlx5, "rx", 8_193) == (8_192, True)


def test_infeasible_error_names_its_field_and_suggestion():
    short = InfeasibleError("flows: 70,000 need 2 IPs: 1 given", required=2, available=1)
    # The field is the label before the first ": ", not the last.
    assert (short.field, short.suggestion, str(short)) == ("flows", "", "flows: 70,000 need 2 IPs: 1 given")
    assert (short.required, short.available) == (2, 1)
    advised = InfeasibleError("flows: too many", required=2, available=1, suggestion="add an IP")
    assert str(advised) == "flows: too many; add an IP"
    named = InfeasibleError("flows: too many", required=2, available=1, field="outbound IPs")
    assert named.field == "outbound IPs"
    unlabelled = InfeasibleError("too many flows", required=2, available=1)
    assert (unlabelled.field, str(unlabelled)) == ("", "too many flows")


def test_next_power_of_two_from_one():
    assert [next_power_of_two(n) for n in range(1, 10)] == [1, 2, 4, 4, 8, 8, 8, 8, 16]
    assert next_power_of_two(1_024) == 1_024
    assert next_power_of_two(1_025) == 2_048


def test_decimal_text_writes_what_the_user_wrote():
    assert decimal_text(Fraction(-3, 2)) == "-1.5"
    assert decimal_text(Fraction("1234.567")) == "1,234.567"
    # Up to 15 decimal places exactly; beyond, 6 significant digits.
    assert decimal_text(Fraction(1, 10**15)) == "0.000000000000001"
    assert decimal_text(Fraction(1, 10**16)) == "1e-16"


def test_exact_refuses_what_is_not_a_finite_number():
    with pytest.raises(TypeError, match=r"^expected a number, got str$"):
        exact("3")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^nan is not a finite number$"):
        exact(float("nan"))


def test_check_decimal_names_field_and_value():
    with pytest.raises(SizingError) as info:
        check_decimal("stall_ms", 5, 1, 3)
    assert (info.value.field, info.value.value) == ("stall_ms", 5)
    assert str(info.value) == "stall_ms: 5 is not allowed: must be between 1 and 3"
    with pytest.raises(SizingError) as info:
        check_decimal("stall_ms", "3", 1, 3)
    assert (info.value.field, info.value.value) == ("stall_ms", "3")
    assert str(info.value) == "stall_ms: '3' is not allowed: must be between 1 and 3"


def test_line_rates_say_whether_they_were_known():
    size = of_size("Standard_D4s_v6")
    assert size is not None
    assert (size.gbps, size.describe(), size.known) == (12.5, "Standard_D4s_v6's line rate 12.5 Gb/s (catalog)", True)
    assert declared(40, "the pool").known is True
    assert assumed(25, "default").known is False


def test_derivation_texts():
    assert derivation("rx") == "an RX ring must hold 1 ms of 1,500-byte packets at that rate"
    assert derivation("tx") == "a TX ring must hold 1 ms of 1,500-byte packets at that rate"
    assert derivation("backlog") == "the backlog must hold 4 ms of 1,500-byte packets at that rate"


PORT = aks_sysctls.PORT_RANGE_KERNEL_NAME
PORT_ALLOWED = (
    '"FIRST LAST" with FIRST 1,024..60,999, LAST 32,768..65,535 and FIRST < LAST (AKS\'s range for '
    "netIpv4IpLocalPortRange)"
)


@pytest.mark.parametrize("value", ["1024 32768", "60999 65535", "32768 60999"])
def test_port_range_edges_aks_accepts(value):
    assert aks_sysctls.check_value(PORT, value) is None


@pytest.mark.parametrize("value", ["61000 65535", "1023 40000", "1024 32767", "1024 65536", "40000 40000", "a b", 5])
def test_port_range_values_aks_refuses(value):
    assert aks_sysctls.check_value(PORT, value) == f"{value!r} is not allowed: {PORT_ALLOWED}"


def test_sysctl_range_edges():
    assert aks_sysctls.check_value("net.core.somaxconn", 4_096) is None
    assert aks_sysctls.check_value("net.core.somaxconn", 3_240_000) is None
    assert aks_sysctls.check_value("net.core.somaxconn", 4_095) == (
        "4095 is not allowed: must be a whole number between 4,096 and 3,240,000 (AKS's range for netCoreSomaxconn)"
    )


def test_sdk_field_of_the_port_range_and_of_a_row():
    assert aks_sysctls.sdk_field(PORT) == "net_ipv4_ip_local_port_range"
    assert aks_sysctls.sdk_field("net.core.somaxconn") == "net_core_somaxconn"


def test_rings_a_default_holds_are_the_default_and_the_delta_has_one_sign():
    # Issue 25: `size rings --driver mlx5_core --line-rate-gbps 5` recommended RX 512, below the driver's default
    # 1,024 that already holds the 407 packets, and printed "+-8.0 MiB".
    plan = plan_rings("mlx5_core", 5)
    assert (plan.packets_in_stall, plan.rx, plan.tx) == (407, 1_024, 1_024)
    assert plan.explain().splitlines() == [
        "At 5 Gb/s with 1,500-byte packets, 407 packets arrive during a 1 ms receive stall.",
        "mlx5_core: RX 1,024 (default 1,024), TX 1,024 (default 1,024): the driver's defaults, which already hold "
        "them.",
        "Kernel memory for RX buffers on 8 queue(s): 16.0 MiB (0.0 MiB over the defaults).",
    ]


@pytest.mark.parametrize(
    ("delta", "shown"),
    [(8 * 2**20, "+8.0 MiB"), (-8 * 2**20, "-8.0 MiB"), (0, "0.0 MiB")],
    ids=["more", "less", "same"],
)
def test_a_memory_delta_is_written_with_one_sign(delta, shown):
    plan = RingPlan(
        driver="mlx5_core", line_rate_gbps=5, stall_ms=1, packet_bytes=1_500, queues=1, packets_in_stall=407,
        rx=1_024, tx=1_024, rx_capped=False, tx_capped=False, rx_default=1_024, tx_default=1_024,
        memory_bytes=16 * 2**20 + delta, default_memory_bytes=16 * 2**20,
    )  # fmt: skip
    assert plan.explain().splitlines()[-1].endswith(f"({shown} over the defaults).")
    assert "+-" not in plan.explain()
