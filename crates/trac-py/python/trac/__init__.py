"""trac: runtime verification of AI agents against LTL rules.

The TRAC algorithms of Alamdari, Klassen & McIlraith, "Formal Methods Meet LLMs: Auditing,
Monitoring, and Intervention for Compliance of Advanced AI Systems" (arXiv 2605.16198): LTL
progression, LTL3 verdicts (satisfied / violated / pending) and TRAC_R (restart after a
violation to count violations), with compiled monitor tables for complete verdicts.

    >>> import trac
    >>> spec = trac.Spec.from_formulas(["G(look -> X !look)"])
    >>> m = trac.Monitor(spec)
    >>> m.step(["look"]), m.step(["look"])[0].verdict
    ([], 'violated')

- :class:`Spec` -- rules: ``Spec.from_file(path)``, ``Spec.from_str(ron)``,
  ``Spec.from_formulas([...])``.
- :class:`Monitor` -- streaming: ``step(event) -> list[Verdict]``, ``residuals()``, ``reset()``.
- :func:`audit` -- a whole trace (a file, or events in memory), returning the records of
  ``trac audit --format jsonl`` as :class:`Verdict` and :class:`End` objects; :func:`audit_table`
  and :meth:`Records.to_pandas` give tables.
- :func:`check` -- a formula's normal form, English reading and monitor facts.
- :class:`Supervisor` -- TRAC_P+I in an agent loop: ``check(action)`` a candidate (nothing
  committed), ``commit(action)`` the step that happened, ``exact(k)`` look-ahead,
  ``residual_english(i)``.
- :mod:`trac.distributed` -- many sessions on a Dask cluster.

Errors are :class:`TracError` and its subclasses :class:`FormulaError` (the message shows the
formula with a caret under the error), :class:`SpecError` and :class:`TraceError`.

"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, Iterable, List, Optional, Sequence, Union

from . import _trac
from ._trac import FormulaError, Spec, SpecError, TraceError, TracError, __version__

__all__ = [
    "Spec",
    "Monitor",
    "Verdict",
    "End",
    "WitnessStep",
    "InstanceEnd",
    "Records",
    "record_from_dict",
    "FormulaInfo",
    "audit",
    "audit_table",
    "audit_jsonl",
    "check",
    "Supervisor",
    "Check",
    "TracError",
    "FormulaError",
    "SpecError",
    "TraceError",
    "ENGINES",
    "__version__",
]

#: The monitoring engines (as ``trac audit --engine``; ``complete-progression`` is
#: ``--engine progression --complete``).
ENGINES = ("compiled", "progression", "complete-progression", "cross-check")

#: An event: a dict like a JSON Lines event (``{"session"?, "step"?, "input"?, "output"?,
#: "labels"?}``), a str (one line of a plain-text action log), or a list / set of the labels
#: (atomic propositions) that hold.
Event = Union[Dict[str, Any], str, Sequence[str], "set[str]", "frozenset[str]"]
SpecLike = Union[Spec, Sequence[Spec]]


@dataclass(frozen=True)
class WitnessStep:
    """One step of a witness: a step since the property's (re)start that changed its residual."""

    step: int
    """1-based step."""
    text: str
    """The step's text (the original line of a text log, or the event's output)."""
    held: List[str]
    """The property's atomic propositions that held at this step, sorted."""
    residual: str
    """The residual formula after this step (Spot syntax)."""

    def to_dict(self) -> Dict[str, Any]:
        return {"step": self.step, "text": self.text, "held": list(self.held), "residual": self.residual}


@dataclass(frozen=True)
class Verdict:
    """A verdict record: a property decided at a step (a ``--format jsonl`` verdict object).

    ``end`` is always False (it tells verdict records from :class:`End` records).
    """

    trace: str
    """The trace: the file as given, ``FILE#SESSION`` for a session, or the monitor's name."""
    property: str
    """The property id."""
    step: int
    """1-based step of the verdict; 0 if decided before the first step."""
    verdict: str
    """``violated`` or ``satisfied``: the LTL3 verdict reached at that step."""
    value: Optional[str]
    """For a parametric property (``forall x: ...``), the value of ``x``; None on a satisfied
    record of the whole property."""
    residual: str
    """The residual formula at the verdict (``false`` / ``true``)."""
    restarted_with: Optional[str]
    """TRAC_R: the residual the property restarted with."""
    witness: List[WitnessStep] = field(default_factory=list)
    """The steps since the property's (re)start that changed its residual."""
    past: List[Dict[str, Any]] = field(default_factory=list)
    """For a property with past-time operators: why its past-time subformulas had their values
    at the verdict step (``{subformula, step, value, since_step, steps, reason}``, the ``past``
    field of the jsonl schema, docs/reference/reports.md); empty otherwise."""
    log_step: Optional[int] = None
    """The step number the log itself gives the verdict step (``Step: 12`` in a text log, a
    ``step`` field in JSON Lines); None when the log gives none."""
    timestamp: Optional[str] = None
    """The timestamp the log gives the verdict step, as written; None when it gives none."""
    call_index: Optional[int] = None
    """For a call step of ``trac audit --step-per call``: its call's 1-based position among the
    tool calls of its message; None otherwise (this package reads one step per message)."""

    end: ClassVar[bool] = False

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Verdict":
        return cls(
            trace=d["trace"],
            property=d["property"],
            step=d["step"],
            verdict=d["verdict"],
            value=d["value"],
            residual=d["residual"],
            restarted_with=d["restarted_with"],
            witness=[WitnessStep(**w) for w in d["witness"]],
            past=list(d.get("past", [])),
            log_step=d.get("log_step"),
            timestamp=d.get("timestamp"),
            call_index=d.get("call_index"),
        )

    def to_dict(self) -> Dict[str, Any]:
        """The JSON Lines object (fields in the order of docs/reference/reports.md; ``log_step``,
        ``timestamp`` and ``call_index`` only when the log gives them, as the CLI writes them)."""
        d = {
            "trace": self.trace,
            "property": self.property,
            "step": self.step,
            "verdict": self.verdict,
            "value": self.value,
            "residual": self.residual,
            "restarted_with": self.restarted_with,
            "witness": [w.to_dict() for w in self.witness],
        }
        if self.past:
            d["past"] = self.past
        if self.log_step is not None:
            d["log_step"] = self.log_step
        if self.timestamp is not None:
            d["timestamp"] = self.timestamp
        if self.call_index is not None:
            d["call_index"] = self.call_index
        return d

    def to_json(self) -> str:
        """The JSON Lines line, byte for byte as the CLI writes it (compact, keys sorted)."""
        return _dumps(self.to_dict())


@dataclass(frozen=True)
class InstanceEnd:
    """One instance of a property at the end of the trace (one per parameter value)."""

    value: Optional[str]
    """The parameter value (None for a non-parametric property)."""
    verdict: str
    """LTL3 verdict at the end (after restarts)."""
    ltlf: str
    """Finite-trace (LTLf) verdict of the whole trace."""
    residual: str
    """Residual formula at the end."""
    violations: int
    """Violations reported for this instance."""

    def to_dict(self) -> Dict[str, Any]:
        return {
            "value": self.value,
            "verdict": self.verdict,
            "ltlf": self.ltlf,
            "residual": self.residual,
            "violations": self.violations,
        }


@dataclass(frozen=True)
class End:
    """An end-of-trace record: one per trace and property (``"end": true`` in JSON Lines)."""

    trace: str
    property: str
    error: Optional[str]
    """The trace error that ended the trace early, or why it was not audited; else None."""
    steps: int
    """Steps read."""
    verdict: str
    """``pending``, ``satisfied`` or ``violated``: the LTL3 verdict at the end (LTLf for an
    ``ltlf`` property; for ``forall x``, the conjunction over every value, seen or not)."""
    violations: int
    """Violations reported."""
    ltlf: str
    """Finite-trace verdict of the whole trace."""
    instances: List[InstanceEnd] = field(default_factory=list)
    """Per parameter value (one entry for a non-parametric property)."""

    end: ClassVar[bool] = True

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "End":
        return cls(
            trace=d["trace"],
            property=d["property"],
            error=d["error"],
            steps=d["steps"],
            verdict=d["verdict"],
            violations=d["violations"],
            ltlf=d["ltlf"],
            instances=[InstanceEnd(**i) for i in d["instances"]],
        )

    def to_dict(self) -> Dict[str, Any]:
        """The JSON Lines object (fields in the order of docs/reference/reports.md)."""
        return {
            "trace": self.trace,
            "property": self.property,
            "end": True,
            "error": self.error,
            "steps": self.steps,
            "verdict": self.verdict,
            "violations": self.violations,
            "ltlf": self.ltlf,
            "instances": [i.to_dict() for i in self.instances],
        }

    def to_json(self) -> str:
        """The JSON Lines line, byte for byte as the CLI writes it (compact, keys sorted)."""
        return _dumps(self.to_dict())


Record = Union[Verdict, End]


def _dumps(d: Dict[str, Any]) -> str:
    # serde_json's compact form: no spaces, keys sorted (its map is ordered by key), non-ASCII
    # text as is.
    return json.dumps(d, separators=(",", ":"), ensure_ascii=False, sort_keys=True)


def record_from_dict(d: Dict[str, Any]) -> Record:
    """A :class:`Verdict` or :class:`End` from its JSON Lines object."""
    return End.from_dict(d) if d.get("end") else Verdict.from_dict(d)


# Columns of the table form of records (see Records.to_arrow).
_COLUMNS = (
    "trace",
    "property",
    "end",
    "step",
    "verdict",
    "value",
    "residual",
    "restarted_with",
    "witness",
    "log_step",
    "timestamp",
    "error",
    "steps",
    "violations",
    "ltlf",
    "instances",
)


class Records(List[Record]):
    """The records of an audit, in the CLI's order: a list of :class:`Verdict` and :class:`End`."""

    @property
    def verdicts(self) -> List[Verdict]:
        """The verdict records."""
        return [r for r in self if not r.end]

    @property
    def ends(self) -> List[End]:
        """The end-of-trace records."""
        return [r for r in self if r.end]  # type: ignore[misc]

    @property
    def violations(self) -> int:
        """Violations counted over every trace and property (from the end records)."""
        return sum(r.violations for r in self if r.end)  # type: ignore[union-attr]

    def to_dicts(self) -> List[Dict[str, Any]]:
        """The JSON Lines objects."""
        return [r.to_dict() for r in self]

    def to_jsonl(self) -> str:
        """The JSON Lines text, one record a line (as ``trac audit --format jsonl``)."""
        return "".join(r.to_json() + "\n" for r in self)

    @classmethod
    def from_jsonl(cls, text: str) -> "Records":
        """Records from JSON Lines text (as ``trac audit --format jsonl`` writes)."""
        return cls(record_from_dict(json.loads(line)) for line in text.splitlines() if line.strip())

    def _rows(self) -> List[Dict[str, Any]]:
        rows = []
        for d in self.to_dicts():
            row = {c: d.get(c) for c in _COLUMNS}
            row["end"] = bool(d.get("end", False))
            rows.append(row)
        return rows

    def to_arrow(self) -> "Any":
        """A ``pyarrow.Table``, one row per record; columns are the union of both records'
        fields (``end`` tells them apart; a field the record lacks is null). Needs pyarrow."""
        import pyarrow as pa

        witness = pa.list_(
            pa.struct(
                [
                    ("step", pa.int64()),
                    ("text", pa.string()),
                    ("held", pa.list_(pa.string())),
                    ("residual", pa.string()),
                ]
            )
        )
        instances = pa.list_(
            pa.struct(
                [
                    ("value", pa.string()),
                    ("verdict", pa.string()),
                    ("ltlf", pa.string()),
                    ("residual", pa.string()),
                    ("violations", pa.int64()),
                ]
            )
        )
        schema = pa.schema(
            [
                ("trace", pa.string()),
                ("property", pa.string()),
                ("end", pa.bool_()),
                ("step", pa.int64()),
                ("verdict", pa.string()),
                ("value", pa.string()),
                ("residual", pa.string()),
                ("restarted_with", pa.string()),
                ("witness", witness),
                ("log_step", pa.int64()),
                ("timestamp", pa.string()),
                ("error", pa.string()),
                ("steps", pa.int64()),
                ("violations", pa.int64()),
                ("ltlf", pa.string()),
                ("instances", instances),
            ]
        )
        return pa.Table.from_pylist(self._rows(), schema=schema)

    def to_pandas(self) -> "Any":
        """A ``pandas.DataFrame``, one row per record (as :meth:`to_arrow`, nullable integer
        columns when pyarrow is installed). Needs pandas."""
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            import pandas as pd

            return pd.DataFrame(self._rows(), columns=list(_COLUMNS))
        import pandas as pd

        return self.to_arrow().to_pandas(types_mapper=_nullable_types(pd))

    def __repr__(self) -> str:
        return f"Records({len(self.verdicts)} verdicts, {len(self.ends)} ends, {self.violations} violations)"


def _nullable_types(pd: Any) -> Any:
    import pyarrow as pa

    mapping = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    return mapping.get


def _records(dicts: Iterable[Dict[str, Any]]) -> Records:
    return Records(record_from_dict(d) for d in dicts)


def _finish(out: Dict[str, Any], name: str, on_error: str) -> Any:
    records = out["records"]
    if out["unknown_fields"]:
        warnings.warn(
            f"{name}: event field(s) ignored: {', '.join(out['unknown_fields'])} "
            "(trac reads session, step, input, output, labels)",
            stacklevel=4,
        )
    err = out["error"]
    message = err[0] if err else out["not_audited"]
    if message and on_error == "raise":
        e = TraceError(message)
        e.records = Records.from_jsonl(records) if isinstance(records, str) else _records(records)  # type: ignore[attr-defined]
        e.file = err[1] if err else name  # type: ignore[attr-defined]
        e.line = err[2] if err else 0  # type: ignore[attr-defined]
        e.column = err[3] if err else 0  # type: ignore[attr-defined]
        raise e
    return records


def _check_args(engine: str, on_error: str) -> None:
    if engine not in ENGINES:
        raise ValueError(f"unknown engine {engine!r}: use one of {', '.join(ENGINES)}")
    if on_error not in ("raise", "record"):
        raise ValueError(f"on_error must be 'raise' or 'record', not {on_error!r}")


def audit(
    path_or_events: Union[str, "os.PathLike[str]", Iterable[Event]],
    spec: SpecLike,
    engine: str = "compiled",
    reset: bool = True,
    *,
    name: Optional[str] = None,
    on_error: str = "raise",
) -> Records:
    """Audits one trace and returns the records ``trac audit --format jsonl`` writes for it.

    ``path_or_events``: a trace file (JSON Lines or a plain-text action log, detected as the CLI
    does; ``-`` is standard input), or an iterable of events (dicts as JSON Lines events, strs as
    action-log lines, or lists / sets of labels), audited as one trace named ``name``
    (``<events>`` by default). Events of different ``session`` s are separate traces
    (``NAME#SESSION``), as in the CLI.

    ``spec``: a :class:`Spec` or a sequence of them. ``engine``: one of :data:`ENGINES`.
    ``reset``: TRAC_R (restart after each violation and count them); False is plain TRAC.

    ``on_error``: a trace that cannot be read to its end (unreadable file, malformed line), or
    that was not audited (empty, or no event understood), raises :class:`TraceError` with
    ``file``, ``line``, ``column`` and ``records`` (the records computed, the same as the
    CLI's) by default; ``"record"`` returns those records instead, their end records carrying
    the error. Bad specs raise :class:`SpecError`; a cross-check mismatch raises
    :class:`TracError`.

    Time: linear in the trace length for the compiled engine (one table lookup per property and
    step), after compiling each property once per process. The GIL is released while auditing.
    """
    return _records(_audit(path_or_events, spec, engine, reset, name, on_error, False))


def _audit(
    path_or_events: Any,
    spec: SpecLike,
    engine: str,
    reset: bool,
    name: Optional[str],
    on_error: str,
    jsonl: bool,
) -> Any:
    _check_args(engine, on_error)
    if isinstance(path_or_events, (str, bytes, os.PathLike)):
        path = os.fsdecode(path_or_events)
        out = _trac.audit_path(path, spec, engine, reset, jsonl)
        return _finish(out, path, on_error)
    if isinstance(path_or_events, dict):
        raise TypeError("audit takes a path or an iterable of events; wrap one event in a list")
    label = "<events>" if name is None else name
    out = _trac.audit_events(path_or_events, spec, label, engine, reset, jsonl)
    return _finish(out, label, on_error)


def audit_jsonl(
    path_or_events: Union[str, "os.PathLike[str]", Iterable[Event]],
    spec: SpecLike,
    engine: str = "compiled",
    reset: bool = True,
    *,
    name: Optional[str] = None,
    on_error: str = "raise",
) -> str:
    """:func:`audit` as JSON Lines text, byte for byte what ``trac audit --format jsonl``
    writes (serialized in Rust: cheaper than :class:`Records` to store or ship)."""
    return str(_audit(path_or_events, spec, engine, reset, name, on_error, True))


def audit_table(
    path_or_events: Union[str, "os.PathLike[str]", Iterable[Event]],
    spec: SpecLike,
    engine: str = "compiled",
    reset: bool = True,
    *,
    name: Optional[str] = None,
    on_error: str = "raise",
) -> Any:
    """:func:`audit` as a ``pyarrow.Table`` (one row per record; see :meth:`Records.to_arrow`)."""
    return audit(path_or_events, spec, engine, reset, name=name, on_error=on_error).to_arrow()


class Monitor:
    """A streaming monitor of one trace (an agent's run) against a spec.

    >>> m = trac.Monitor(trac.Spec.from_file("examples/specs/textworld.ron"))
    >>> m.step({"output": "take knife"})      # -> list[Verdict]
    >>> m.step("examine knife")               # a text line, as in an action log
    >>> m.residuals()                         # {"R1[knife]": "true", ...}
    >>> m.end()                               # end-of-trace verdicts and End records
    >>> m.reset()                             # a new trace

    Each property is monitored with TRAC_R by default (``reset=False``: plain TRAC) on the
    given engine. Verdicts decided before the first step (step 0) come with the first step.
    One monitor is one trace: a ``session`` field in events is ignored. A monitor belongs to the
    thread that made it.
    """

    def __init__(
        self,
        spec: SpecLike,
        engine: str = "compiled",
        reset: bool = True,
        name: str = "<monitor>",
    ) -> None:
        _check_args(engine, "raise")
        self._m = _trac.NativeMonitor(spec, engine, reset, name)

    def step(self, event: Event) -> List[Verdict]:
        """Reads one event and returns the verdicts reached at this step.

        ``event``: a dict (as a JSON Lines event), a str (a line of an action log, step number
        and markdown stripped) or a list / set of the labels that hold. Raises
        :class:`TraceError` for a bad event (the monitor is unchanged) and :class:`TracError`
        after :meth:`end`. Event fields trac ignores and labels that match no proposition of
        the spec are warned about (``UserWarning``, once each per monitor), as :func:`audit`
        does. O(properties) per step on the compiled engine.
        """
        verdicts = [Verdict.from_dict(d) for d in self._m.step(event)]
        # Ignored fields and labels that match no proposition, once each, as audit() warns.
        for w in self._m.take_warnings():
            warnings.warn(w, stacklevel=2)
        return verdicts

    def residuals(self) -> Dict[str, str]:
        """Each property's residual formula now (what is still to be satisfied), in Spot
        syntax: ``{id: residual}``; a parametric property has one entry per value seen,
        ``{"id[value]": residual}``."""
        return dict(self._m.residuals())

    def end(self) -> Records:
        """Ends the trace: end-of-trace verdicts (``ltlf`` properties) and one :class:`End`
        per property, as :func:`audit` gives. Calling it again returns the same records."""
        return _records(self._m.end())

    def reset(self) -> None:
        """Starts a new trace: every property back at its formula."""
        self._m.reset()

    @property
    def steps(self) -> int:
        """Steps read since the last reset."""
        return int(self._m.steps)

    @property
    def name(self) -> str:
        """The trace name in records."""
        return str(self._m.name)

    def __repr__(self) -> str:
        return f"Monitor(name={self.name!r}, steps={self.steps})"


@dataclass(frozen=True)
class FormulaInfo:
    """What :func:`check` tells about a formula (as ``trac check``)."""

    formula: str
    """The formula normalized, in Spot syntax (with its ``forall`` prefix)."""
    english: str
    """A plain-English reading."""
    propositions: List[str]
    """Its atomic propositions."""
    initial: Optional[str]
    """The monitor's verdict before the first step (``pending`` / ``satisfied`` / ``violated``)."""
    states: Optional[int]
    """States of the minimized LTL3 monitor (the two verdict sinks included)."""
    pending_states: Optional[int]
    """States whose verdict is pending."""
    decision_nodes: Optional[int]
    """Decision-diagram nodes of its transitions."""
    monitorability: Optional[str]
    """``safety``, ``co-safety``, ``safety and co-safety``, ``monitorable`` or
    ``non-monitorable``; past the search budget (4096 tableau states per check),
    ``monitorable (whether safety or co-safety: unknown within 4096 tableau states per check)``."""
    compile_error: Optional[str]
    """Why the monitor could not be built (then the monitor facts are None)."""


def check(formula: str) -> FormulaInfo:
    """Parses and checks a formula (Spot syntax, optionally ``forall VAR:``), as ``trac check``.

    Raises :class:`FormulaError` whose message shows the formula with a caret under the error.
    Compiling the monitor is exponential in the worst case, so it is bounded as ``trac check``
    is: a monitor over 4096 states is not built (``compile_error`` says so) and the
    monitorability search gives up past 4096 tableau states per check.
    """
    return FormulaInfo(**_trac.check(formula))


@dataclass(frozen=True)
class Check:
    """What a candidate action would do (:meth:`Supervisor.check`); nothing was committed."""

    compliant: bool
    """Whether the action would violate no property now."""
    violated: List[Any]
    """``(property, value)`` of each violation it would cause (value: the parameter's value of
    a parametric property, else None)."""
    records: List[Verdict]
    """The verdict records the action would produce (as :meth:`Supervisor.commit` would)."""

    def __bool__(self) -> bool:
        return self.compliant


class Supervisor:
    """The monitors of a spec between a Python agent and its environment (TRAC_P+I).

    >>> sup = trac.Supervisor(trac.Spec.from_formulas(["G(book -> O confirm)"]))
    >>> sup.check("book", labels=["book"]).compliant      # nothing committed
    False
    >>> sup.commit("confirm", labels=["confirm"])[0].verdict   # the step happened: its verdicts
    'satisfied'
    >>> sup.exact(1, {"book": True})[0]["risk"]                 # look-ahead: now never violated
    0.0

    It wraps the supervisor of ``trac run`` and ``trac gateway`` (crate ``trac-agent``): the run
    is one session of the audit driver on compiled monitors (TRAC_R unless ``reset=False``), so
    the verdicts of the committed steps are those :func:`audit` gives the same events (the
    events of :meth:`commit` are ``{"step", "input", "output": action, "labels"}``). Records
    are :class:`Verdict` objects with trace ``name`` (``name#session`` with a session). Bad
    specs raise :class:`SpecError`, bad events or labels :class:`TraceError`, an unknown
    property :class:`TracError`. A supervisor belongs to the thread that made it.
    """

    def __init__(
        self,
        spec: SpecLike,
        reset: bool = True,
        session: Optional[str] = None,
        *,
        name: str = "<supervisor>",
    ) -> None:
        self._s = _trac.NativeSupervisor(spec, reset, session, name)

    def initial(self) -> List[Verdict]:
        """The verdicts decided before the first step (step 0). Once: later calls give none,
        and a first :meth:`commit` without it returns them first."""
        return [Verdict.from_dict(d) for d in self._s.initial()]

    def label(self, action: str, given: Optional[Iterable[str]] = None) -> List[str]:
        """The labels of ``action``: the spec's labeling rules on its text, plus ``given`` (the
        environment's labels), sorted."""
        return list(self._s.label(action, None if given is None else list(given)))

    def check(self, action: str, labels: Optional[Iterable[str]] = None) -> Check:
        """What ``action`` would do now (its labels: :meth:`label` of it and ``labels``),
        without committing it. O(properties)."""
        d = self._s.check(action, None if labels is None else list(labels))
        return _check(d)

    def commit(
        self,
        action: str,
        input: Optional[str] = None,
        labels: Optional[Iterable[str]] = None,
    ) -> List[Verdict]:
        """The step happened (``input``: what the agent saw): every monitor progresses; returns
        the step's verdicts."""
        return [
            Verdict.from_dict(d)
            for d in self._s.commit(action, input, None if labels is None else list(labels))
        ]

    def check_event(self, event: Event) -> Check:
        """What trace event ``event`` (a dict as a JSON Lines event -- chat messages with roles
        and tool calls included --, a str log line or a list of labels) would do now, labeled
        as :func:`audit` labels it; nothing committed."""
        return _check(self._s.check_event(event))

    def commit_event(self, event: Event) -> List[Verdict]:
        """Trace event ``event`` happened (labeled as :func:`audit` labels it); returns its
        verdicts."""
        return [Verdict.from_dict(d) for d in self._s.commit_event(event)]

    def residual(self, prop: Union[int, str]) -> str:
        """The residual formula of property ``prop`` (its index or id) now, Spot syntax
        (``value: residual`` per instance of a parametric property, ``; ``-separated)."""
        return str(self._s.residual(prop))

    def residual_english(self, prop: Union[int, str]) -> str:
        """The residual obligation of property ``prop`` (index or id) in plain English, with the
        spec's proposition descriptions (the *inject* intervention's text); the property's
        formula in English when nothing is pending."""
        return str(self._s.residual_english(prop))

    def exact(self, k: int, known: Optional[Dict[str, bool]] = None) -> List[Dict[str, Any]]:
        """The exact look-ahead per property within ``k`` steps, given what is known of the next
        step's labels (``known``: ``{label: holds}``): dicts with ``property``, ``risk`` (1.0 if
        some monitor must be violated at the next step, 0.0 if none can be within ``k`` steps,
        else None), ``min_steps`` and ``immediate`` (next-step valuations that violate at once)."""
        return list(self._s.exact(k, known))

    def end_of_run(self) -> List[Verdict]:
        """The verdicts decided by the end of the run (``ltlf`` properties). The run's session
        is closed: later checks, commits and look-aheads raise :class:`TracError`; a second
        call gives none."""
        return [Verdict.from_dict(d) for d in self._s.end_of_run()]

    @property
    def properties(self) -> List[Dict[str, Any]]:
        """The monitored properties: dicts with ``id``, ``description``, ``english``, ``var``."""
        return list(self._s.properties)

    @property
    def steps(self) -> int:
        """Steps committed so far."""
        return int(self._s.steps)

    @property
    def name(self) -> str:
        """The trace name in records."""
        return str(self._s.name)

    def __repr__(self) -> str:
        ids = ", ".join(p["id"] for p in self.properties)
        return f"Supervisor(name={self.name!r}, steps={self.steps}, properties=[{ids}])"


def _check(d: Dict[str, Any]) -> Check:
    return Check(
        compliant=bool(d["compliant"]),
        violated=[tuple(v) for v in d["violated"]],
        records=[Verdict.from_dict(r) for r in d["records"]],
    )
