"""Type stubs of the native module ``trac._trac`` (pyo3). Use it through ``trac``."""

import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

__version__: str

class TracError(Exception):
    """Base class of every error raised by trac."""

class FormulaError(TracError):
    """A formula that does not parse or cannot be monitored; the message shows the formula
    with a caret under the error."""

class SpecError(TracError):
    """A spec that does not load or check: one ``file:line:column: message`` line per problem."""

class TraceError(TracError):
    """A trace or event that cannot be read: ``file:line:column: message``."""

    file: str
    line: int
    column: int
    records: Any
    """(From ``trac.audit``) the records computed before the error, as the CLI writes them."""

class Spec:
    """A checked spec: propositions with labeling rules, and properties (LTL formulas)."""

    @staticmethod
    def from_file(path: Union[str, "os.PathLike[str]"]) -> "Spec":
        """Reads and checks a spec file (RON). Raises SpecError."""
    @staticmethod
    def from_str(ron: str, name: str = "<string>") -> "Spec":
        """Reads and checks a spec from RON text; ``name`` names it in errors."""
    @staticmethod
    def from_formulas(formulas: Union[Sequence[str], Mapping[str, str]]) -> "Spec":
        """Ad-hoc properties over the trace's labels: ids f1, f2, ... or ``{id: formula}``.
        Raises FormulaError (caret message) or SpecError."""
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def propositions(self) -> List[str]:
        """The declared atomic propositions."""
    @property
    def properties(self) -> List[Dict[str, str]]:
        """``{id, description, formula, english, semantics}`` per property."""
    @property
    def shipped_tables(self) -> int:
        """Compiled tables carried from the pickle this spec was made from."""
    def compile(self) -> int:
        """Compiles the monitor tables into this process's cache; returns how many."""
    def __reduce__(self) -> Tuple[Any, Tuple[str]]: ...

class NativeMonitor:
    def __init__(
        self,
        spec: Union[Spec, Sequence[Spec]],
        engine: str = "compiled",
        reset: bool = True,
        name: str = "<monitor>",
    ) -> None: ...
    def step(self, event: Any) -> List[Dict[str, Any]]: ...
    def take_warnings(self) -> List[str]: ...
    def residuals(self) -> Dict[str, str]: ...
    def end(self) -> List[Dict[str, Any]]: ...
    def reset(self) -> None: ...
    @property
    def steps(self) -> int: ...
    @property
    def name(self) -> str: ...

class NativeSupervisor:
    def __init__(
        self,
        spec: Union[Spec, Sequence[Spec]],
        reset: bool = True,
        session: Optional[str] = None,
        name: str = "<supervisor>",
    ) -> None: ...
    def initial(self) -> List[Dict[str, Any]]: ...
    def label(self, action: str, given: Optional[List[str]] = None) -> List[str]: ...
    def check(self, action: str, labels: Optional[List[str]] = None) -> Dict[str, Any]: ...
    def commit(
        self, action: str, input: Optional[str] = None, labels: Optional[List[str]] = None
    ) -> List[Dict[str, Any]]: ...
    def check_event(self, event: Any) -> Dict[str, Any]: ...
    def commit_event(self, event: Any) -> List[Dict[str, Any]]: ...
    def residual(self, prop: Union[int, str]) -> str: ...
    def residual_english(self, prop: Union[int, str]) -> str: ...
    def exact(self, k: int, known: Optional[Dict[str, bool]] = None) -> List[Dict[str, Any]]: ...
    def end_of_run(self) -> List[Dict[str, Any]]: ...
    @property
    def properties(self) -> List[Dict[str, Any]]: ...
    @property
    def steps(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def session(self) -> Optional[str]: ...

def check(formula: str) -> Dict[str, Any]: ...
def audit_path(
    path: Union[str, "os.PathLike[str]"],
    spec: Union[Spec, Sequence[Spec]],
    engine: str = "compiled",
    reset: bool = True,
    jsonl: bool = False,
) -> Dict[str, Any]: ...
def audit_events(
    events: Iterable[Any],
    spec: Union[Spec, Sequence[Spec]],
    name: str = "<events>",
    engine: str = "compiled",
    reset: bool = True,
    jsonl: bool = False,
) -> Dict[str, Any]: ...
