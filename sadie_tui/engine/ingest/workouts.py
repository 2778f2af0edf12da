"""Workouts from GPX tracks and FIT activity files as observations (source ``workout``).

Each track of a GPX file (``gpxpy``) and each session of a FIT file (``fitdecode``; a file
without session messages is summed from its records) becomes one observation: the sport, when
it started (local wall time), the distance, the elapsed duration, the pace (per km on foot, per
100 m swimming, km/h on a bike) and the average heart rate when the file has one. A file with
nothing to summarise is skipped with the reason.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from .calendar import local_naive
from .raw import MAX_BYTES, Derived, ReadResult, Unreadable, clean_text, read_text
from .reader import Reader, ReadOptions

if TYPE_CHECKING:
    from fitdecode import FitDataMessage
    from gpxpy.gpx import GPXTrackPoint

#: Sports measured by speed rather than pace, and those paced per 100 m.
SPEED_SPORTS = {"cycling", "biking", "bike", "ride", "e_biking", "mountain_biking"}
SWIM_SPORTS = {"swimming", "swim", "open_water_swimming", "lap_swimming"}


@dataclass
class Workout:
    """What one workout comes to: enough for a sentence and a date."""

    sport: str
    start: datetime
    distance_m: float | None
    seconds: float | None
    heart_rate: float | None = None

    def text(self) -> str:
        """The observation's sentence, e.g. ``Workout: running, 5.10 km in 30:00 (pace
        5:53 /km), average heart rate 148 bpm.``"""
        parts = [f"Workout: {self.sport.replace('_', ' ')}"]
        amount = []
        if self.distance_m:
            amount.append(f"{self.distance_m / 1000:.2f} km")
        if self.seconds:
            amount.append(("in " if amount else "") + _clock(self.seconds))
        if amount:
            parts.append(" ".join(amount) + self._pace())
        parts.append(f"started {self.start:%Y-%m-%d %H:%M}")
        if self.heart_rate:
            parts.append(f"average heart rate {round(self.heart_rate)} bpm")
        return ", ".join(parts) + "."

    def _pace(self) -> str:
        if not (self.distance_m and self.seconds):
            return ""
        sport = self.sport.casefold()
        if sport in SPEED_SPORTS:
            return f" ({self.distance_m / self.seconds * 3.6:.1f} km/h)"
        if sport in SWIM_SPORTS:
            return f" (pace {_clock(self.seconds / self.distance_m * 100)} /100 m)"
        return f" (pace {_clock(self.seconds / self.distance_m * 1000)} /km)"

    def derived(self, source_key: str) -> Derived:
        """The workout as an observation row for the pipeline."""
        return Derived(
            "observations",
            source_key,
            {"source": "workout", "observed_at": self.start, "text": self.text()},
        )


def _clock(seconds: float) -> str:
    """``1:02:03`` or ``5:53``."""
    total = round(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _check_size(path: Path) -> None:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise Unreadable(exc.strerror.lower() if exc.strerror else str(exc)) from exc
    if size > MAX_BYTES:
        raise Unreadable(f"too large ({size / 1e6:.1f} MB; the limit is {MAX_BYTES // 2**20} MB)")


# --------------------------------------------------------------------------- GPX


def _heart_rates(point: GPXTrackPoint) -> list[float]:
    """Heart rates in a track point's extensions (Garmin's ``gpxtpx:hr`` and its kin)."""
    rates: list[float] = []
    for extension in point.extensions or []:
        for element in extension.iter():
            tag = str(element.tag).rsplit("}", 1)[-1].casefold()
            if tag in {"hr", "heartrate"} and element.text:
                try:
                    rates.append(float(element.text))
                except ValueError:
                    continue
    return rates


def read_gpx(path: Path, key: str, result: ReadResult) -> None:
    """Each track of the GPX file at ``path`` into ``result`` as a workout observation."""
    # lazy: gpxpy loads only when a GPX file is read
    import gpxpy
    import gpxpy.gpx

    _check_size(path)
    try:
        gpx = gpxpy.parse(read_text(path))
    except gpxpy.gpx.GPXException as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Unreadable(f"not a GPX file ({first[:200]})") from exc
    if not gpx.tracks:
        raise Unreadable("no tracks in the GPX file")
    found = 0
    for number, track in enumerate(gpx.tracks, start=1):
        bounds = track.get_time_bounds()
        if bounds.start_time is None:
            continue
        start, _ = local_naive(bounds.start_time)
        rates = [hr for seg in track.segments for p in seg.points for hr in _heart_rates(p)]
        sport = clean_text(str(track.type or gpx.name or "")).strip().casefold() or "workout"
        workout = Workout(
            sport=sport,
            start=start,
            distance_m=track.length_3d() or None,
            seconds=track.get_duration() or None,
            heart_rate=sum(rates) / len(rates) if rates else None,
        )
        result.derived.append(workout.derived(f"{key}#{number}"))
        found += 1
    if not found:
        raise Unreadable("the GPX tracks have no times (not a recorded workout)")


# --------------------------------------------------------------------------- FIT


def read_fit(path: Path, key: str, result: ReadResult) -> None:
    """Each session of the FIT file at ``path`` into ``result`` as a workout observation; a
    file without sessions is summed from its records."""
    # lazy: fitdecode loads only when a FIT file is read
    import fitdecode

    _check_size(path)
    sessions: list[dict[str, object]] = []
    records: list[dict[str, object]] = []
    sport = ""
    try:
        # Damage is reported once, as the file's skip line: no warning per bad message (a
        # corrupt file gave hundreds on stderr), the CRC computed but not held against it.
        with fitdecode.FitReader(
            str(path),
            check_crc=fitdecode.CrcCheck.READONLY,
            error_handling=fitdecode.ErrorHandling.IGNORE,
        ) as fit:
            for frame in fit:
                if not isinstance(frame, fitdecode.FitDataMessage):
                    continue
                if frame.name == "session":
                    sessions.append(_fields(frame))
                elif frame.name == "record":
                    records.append(_fields(frame))
                elif frame.name == "sport" and not sport:
                    sport = str(_fields(frame).get("sport") or "")
    # The parser's own errors on damaged data are not all FitErrors (a field of the wrong
    # type raises TypeError or ValueError from its processors): each is the file's skip line.
    except (fitdecode.FitError, ValueError, TypeError, KeyError, IndexError, struct.error) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise Unreadable(f"not a readable FIT file ({first[:200]})") from exc
    workouts = [w for w in (_session_workout(s) for s in sessions) if w is not None]
    if not workouts:
        summed = _records_workout(records, sport)
        if summed is None:
            raise Unreadable("no sessions or timed records in the FIT file")
        workouts = [summed]
    for number, workout in enumerate(workouts, start=1):
        result.derived.append(workout.derived(f"{key}#{number}"))


def _fields(frame: FitDataMessage) -> dict[str, object]:
    return {field.name: field.value for field in frame.fields if field.value is not None}


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def _session_workout(session: dict[str, object]) -> Workout | None:
    when = session.get("start_time") or session.get("timestamp")
    if not isinstance(when, datetime):
        return None
    start, _ = local_naive(when)
    sport = clean_text(str(session.get("sport") or "workout")).strip() or "workout"
    return Workout(
        sport=sport,
        start=start,
        distance_m=_number(session.get("total_distance")),
        seconds=_number(session.get("total_elapsed_time") or session.get("total_timer_time")),
        heart_rate=_number(session.get("avg_heart_rate")),
    )


def _records_workout(records: list[dict[str, object]], sport: str) -> Workout | None:
    timed = [r for r in records if isinstance(r.get("timestamp"), datetime)]
    stamps = [t for r in timed if isinstance(t := r.get("timestamp"), datetime)]
    if not stamps:
        return None
    first, last = stamps[0], stamps[-1]
    distances = [d for r in timed if (d := _number(r.get("distance"))) is not None]
    rates = [h for r in timed if (h := _number(r.get("heart_rate"))) is not None]
    start, _ = local_naive(first)
    return Workout(
        sport=clean_text(sport).strip() or "workout",
        start=start,
        distance_m=max(distances) if distances else None,
        seconds=(last - first).total_seconds() or None,
        heart_rate=sum(rates) / len(rates) if rates else None,
    )


def _gpx(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_gpx(path, key, result)


def _fit(path: Path, key: str, result: ReadResult, options: ReadOptions) -> None:
    read_fit(path, key, result)


GPX = Reader("GPX workout", frozenset({".gpx"}), _gpx)
FIT = Reader("FIT workout", frozenset({".fit"}), _fit)
