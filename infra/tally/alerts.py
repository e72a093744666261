"""`./tally alerts`: NoisyNeighborJob's alerts, current and recent, from tally.alerts (the same
FIRING/RESOLVED records the job writes to namespace sched.alerts), one line each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from .model import topic
from .settings import Settings
from .topic_reader import read_topic

ALERTS_TOPIC = topic("alerts")


@dataclass
class Alert:
    container: str  # host/container
    state: str  # FIRING | RESOLVED
    window_end: datetime
    p99_us: int
    baseline_p99_us: int
    by_others: int  # switch-outs by other containers and by the system in the window
    by_itself: int
    waited_behind_others_us: int  # sampled wake-ups' waits that ended behind others' tasks
    reason: str

    @staticmethod
    def of(v: dict) -> Alert:
        end = v["window_end"]
        if not isinstance(end, datetime):  # timestamp-micros as a number
            end = datetime.fromtimestamp(end / 1e6, UTC)
        return Alert(
            container=f"{v['host']}/{v['container']}",
            state=v["state"],
            window_end=end,
            p99_us=v["runq_p99_us"],
            baseline_p99_us=v["baseline_p99_us"],
            by_others=v["switch_outs_other_container"] + v["switch_outs_system"],
            by_itself=v["switch_outs_same_container"],
            # records from before the field have none (the writer's schema decodes them)
            waited_behind_others_us=v.get("runq_wait_behind_other_container_us", 0)
            + v.get("runq_wait_behind_system_us", 0),
            reason=v["reason"],
        )

    def line(self) -> str:
        return (
            f"{self.window_end:%Y-%m-%d %H:%M:%S} {self.state:<8} {self.container:<36} "
            f"p99 {self.p99_us / 1000:.1f} ms (baseline {self.baseline_p99_us / 1000:.1f}), "
            f"switch-outs by others {self.by_others}, by itself {self.by_itself}, "
            f"waited behind others {self.waited_behind_others_us / 1000:.0f} ms: {self.reason}"
        )


def read(settings: Settings) -> list[Alert]:
    alerts = [Alert.of(r.value) for r in read_topic(settings, ALERTS_TOPIC, "tally-alerts-cli")]
    return sorted(alerts, key=lambda a: a.window_end)


def firing(alerts: list[Alert]) -> list[Alert]:
    """The containers whose latest alert is FIRING."""
    latest: dict[str, Alert] = {}
    for a in alerts:
        latest[a.container] = a
    return [a for a in latest.values() if a.state == "FIRING"]


def report(alerts: list[Alert], since: timedelta, now: datetime | None = None) -> list[str]:
    now = now or datetime.now(UTC)
    current = firing(alerts)
    recent = [a for a in alerts if a.window_end >= now - since]
    lines = [f"firing now: {len(current)}"]
    lines += ["  " + a.line() for a in current]
    lines.append(f"alerts in the last {since}: {len(recent)}")
    lines += ["  " + a.line() for a in recent]
    return lines
