"""What a reflection run did: the counts ``sadie reflect --json`` prints and the run's row
keeps."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..jsonvalue import JSONObject


@dataclass
class ReflectReport:
    """What a run did (``sadie reflect --json``)."""

    run_id: str | None = None
    model: str = ""
    episodes: int = 0  # read and marked as reflected
    batches: int = 0
    questions: int = 0  # salient questions the model asked of the batches
    recalled: int = 0  # passages retrieval found for them outside their batch
    proposed: int = 0  # beliefs the model proposed
    all_verbatim: int = 0  # ... whose every quote was word for word
    dropped: int = 0  # ... dropped: no evidence survived
    quotes_dropped: dict[str, int] = field(default_factory=dict)  # reason → count
    not_beliefs: dict[str, int] = field(default_factory=dict)  # plans, one-day events: count
    new: int = 0
    merged: int = 0  # folded into a belief they repeat, with new evidence
    repeated: int = 0  # the same belief with nothing new
    rejected_before: int = 0
    retired_before: int = 0
    contested: int = 0
    retired: int = 0
    evidence_added: int = 0
    judged: int = 0  # verdict requests
    set_aside: dict[str, int] = field(default_factory=dict)  # verdicts that changed nothing, why
    unusable: int = 0  # batches whose answer could not be read
    unusable_why: dict[str, int] = field(default_factory=dict)  # why (the answer is not JSON…)
    failed: int = 0  # requests that failed (timeouts); a failed batch waits for the next run
    requests: int = 0  # to the model, all kinds
    prompt_tokens: int = 0  # tokens read (the server's prompt_eval_count)
    eval_tokens: int = 0  # tokens written
    elapsed: float = 0.0
    left: int = 0  # episodes still waiting
    stopped: str | None = None  # "budget" or "stopped" when the run ended early
    new_ids: list[str] = field(default_factory=list)
    #: The records' figures (``figures.RecordsReport``): observations read and left out,
    #: record-backed beliefs, self-reports checked and contested.
    records: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> JSONObject:
        """The counts as printed and kept, the time to a tenth of a second."""
        data = asdict(self)
        data["elapsed"] = round(self.elapsed, 1)
        return data
