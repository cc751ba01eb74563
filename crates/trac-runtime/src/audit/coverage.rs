//! What an audit could read of a trace ([`Coverage`]), and which properties it could decide.

use rustc_hash::FxHashSet;
use serde::Serialize;
use trac_core::snippet::{snippet, SNIPPET_CHARS};
use trac_spec::spec::CheckedSpec;

/// What an audit could read of a trace: how many steps carried text or labels, how many it
/// understood, and which labels held. A trace of which no step was understood was not audited at
/// all, whatever its verdicts say (a `forall` or `G !p` property is vacuously clean on it).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Coverage {
    /// Steps read.
    pub steps: usize,
    /// Steps whose event had non-blank text (output or input).
    pub with_text: usize,
    /// Steps whose event gave a `labels` field (even an empty one).
    pub with_labels: usize,
    /// Steps understood: the event gave `labels`, or it had text and some spec has labeling rules
    /// that read it.
    pub understood: usize,
    /// Every label that held at some step (given by the trace or computed by the rules).
    #[serde(skip)]
    pub labels_seen: FxHashSet<String>,
    /// Steps whose event had a role.
    #[serde(skip)]
    pub with_role: usize,
    /// Steps whose event made a tool call or was a tool result.
    #[serde(skip)]
    pub with_tools: usize,
    /// Steps whose event had record fields (other than `session_end`).
    #[serde(skip)]
    pub with_fields: usize,
}

impl Coverage {
    /// Adds `other`'s counts and labels (for a file audited as several sessions).
    pub fn merge(&mut self, other: &Coverage) {
        self.steps += other.steps;
        self.with_text += other.with_text;
        self.with_labels += other.with_labels;
        self.understood += other.understood;
        self.with_role += other.with_role;
        self.with_tools += other.with_tools;
        self.with_fields += other.with_fields;
        // Only new labels are cloned: a file of many sessions merges the same few labels once
        // per session.
        for l in &other.labels_seen {
            if !self.labels_seen.contains(l) {
                self.labels_seen.insert(l.clone());
            }
        }
    }

    /// Whether atom `name` of a property quantified over `var` (if any) held at some step: the
    /// label `name` itself, or for `base(var)` any label `base(value)`. O(distinct labels) for a
    /// quantified atom, O(1) otherwise.
    pub fn ever_labeled(&self, name: &str, var: Option<&str>) -> bool {
        if self.labels_seen.contains(name) {
            return true;
        }
        let Some((base, arg)) = trac_ltl::formula::split_atom_name(name) else {
            return false;
        };
        // Several variables (`tool, rid`) and several parameters (`load(p, a1)`): a label
        // of the same base and arity whose constants agree.
        let Some(var) = var else {
            return false;
        };
        let vars: Vec<&str> = trac_core::names::split_list(var).collect();
        let args: Vec<&str> = trac_core::names::split_list(arg).collect();
        if !args.iter().any(|a| vars.contains(a)) {
            return false;
        }
        self.labels_seen.iter().any(|l| {
            trac_ltl::formula::split_atom_name(l).is_some_and(|(b, a)| {
                let vals: Vec<&str> = trac_core::names::split_list(a).collect();
                b == base
                    && vals.len() == args.len()
                    && args
                        .iter()
                        .zip(&vals)
                        .all(|(x, v)| vars.contains(x) || x == v)
            })
        })
    }

    /// Warnings about labels and propositions that do not meet, for a trace audited against
    /// `specs` (empty when no spec declares a proposition, i.e. only `--formula`s):
    /// - labels that held (given by the trace) whose name is no proposition any spec declares and
    ///   no atom of any property: a label spelled differently from the spec's proposition is
    ///   otherwise silently ignored (up to 8 listed, then a count);
    /// - when the trace gave no `labels` at all and `model` is false (no LLM labels anything):
    ///   propositions that a property reads, that have no labeling rule and so never held;
    /// - propositions that a property reads whose rule reads structure no step had
    ///   ([`Coverage::never_hold`]: roles, tools, arguments or fields on a text log).
    ///
    /// Each warning is one line without the `warning:` prefix, naming `file`.
    /// O(distinct labels × declared propositions).
    pub fn label_warnings(&self, file: &str, specs: &[CheckedSpec], model: bool) -> Vec<String> {
        let declared: Vec<&trac_spec::spec::PropositionDecl> = specs
            .iter()
            .flat_map(|c| c.spec.propositions.iter())
            .collect();
        if declared.is_empty() {
            return Vec::new();
        }
        let base_of = |l: &str| -> String {
            trac_ltl::formula::split_atom_name(l)
                .map_or(l, |(b, _)| b)
                .to_string()
        };
        let mut read: FxHashSet<String> = FxHashSet::default();
        for p in specs.iter().flat_map(|c| c.properties.iter()) {
            for s in p.arena.atoms(p.formula) {
                let name = p.arena.sym_name(s);
                read.insert(name.to_string());
                read.insert(base_of(name));
            }
        }
        let mut out = Vec::new();
        let mut stray: Vec<&str> = self
            .labels_seen
            .iter()
            .map(String::as_str)
            .filter(|l| {
                let b = base_of(l);
                !declared.iter().any(|d| d.name == b) && !read.contains(*l) && !read.contains(&b)
            })
            .collect();
        if !stray.is_empty() {
            stray.sort_unstable();
            let n = stray.len();
            let shown: Vec<String> = stray
                .iter()
                .take(8)
                .map(|l| format!("`{}`", snippet(l, SNIPPET_CHARS)))
                .collect();
            let more = if n > 8 {
                format!(" and {} more", n - 8)
            } else {
                String::new()
            };
            out.push(format!(
                "{file}: label(s) {}{more} match no proposition of the spec(s) and were ignored",
                shown.join(", ")
            ));
        }
        // Only the propositions some property reads: an unused one cannot hide a verdict.
        for (name, why) in self.never_hold(specs, model) {
            if !read.contains(&name) {
                continue;
            }
            out.push(format!(
                "{file}: proposition `{name}` can never hold: {why}, and no step has any"
            ));
        }
        if self.with_labels == 0 && !model {
            for d in &declared {
                if d.rule.is_none()
                    && read.contains(&d.name)
                    && !self.labels_seen.iter().any(|l| base_of(l) == d.name)
                {
                    out.push(format!(
                        "{file}: proposition `{}` has no labeling rule and the trace gives no labels: it never held",
                        d.name
                    ));
                }
            }
        }
        out
    }

    /// What the steps carried beyond text and labels (roles, tool calls, fields).
    pub fn structure(&self) -> crate::label::labeler::Structure {
        crate::label::labeler::Structure {
            roles: self.with_role > 0,
            tools: self.with_tools > 0,
            fields: self.with_fields > 0,
        }
    }

    /// The propositions of `specs` that can never hold on this trace, with why: their labeling
    /// rule reads structure (roles, tools, arguments, fields) that no step had
    /// ([`crate::label::labeler::never_holds`]), and the trace gives no labels (none held with their
    /// name) and no LLM labels anything (`model` false). In declaration order.
    /// O(propositions × rule size).
    pub fn never_hold(&self, specs: &[CheckedSpec], model: bool) -> Vec<(String, String)> {
        if model || self.with_labels > 0 {
            return Vec::new();
        }
        let has = self.structure();
        let mut out: Vec<(String, String)> = Vec::new();
        for d in specs.iter().flat_map(|c| c.spec.propositions.iter()) {
            if out.iter().any(|(n, _)| *n == d.name) {
                continue;
            }
            if let Some(why) = d
                .rule
                .as_ref()
                .and_then(|r| crate::label::labeler::never_holds(r, has))
            {
                out.push((d.name.clone(), why));
            }
        }
        out
    }

    /// The properties of `specs` none of whose atoms can hold on this trace: each atom is a
    /// proposition of [`Coverage::never_hold`] (a property with an atom of no spec, or a derived
    /// atom, is kept). `(property id, its propositions)`, in order. Such a property would pass
    /// every `G !p` rule vacuously: it was not audited.
    pub fn unaudited_properties(
        &self,
        specs: &[CheckedSpec],
        model: bool,
    ) -> Vec<(String, Vec<String>)> {
        let never = self.never_hold(specs, model);
        if never.is_empty() {
            return Vec::new();
        }
        let mut out = Vec::new();
        for p in specs.iter().flat_map(|c| c.properties.iter()) {
            let mut props: Vec<String> = Vec::new();
            let mut all = true;
            for s in p.arena.atoms(p.formula) {
                let name = p.arena.sym_name(s);
                let base = trac_ltl::formula::split_atom_name(name).map_or(name, |(b, _)| b);
                if never.iter().any(|(n, _)| n == base) {
                    if !props.iter().any(|x| x == base) {
                        props.push(base.to_string());
                    }
                } else {
                    all = false;
                }
            }
            if all && !props.is_empty() {
                out.push((p.decl.id.clone(), props));
            }
        }
        out
    }

    /// The specs of `specs` with propositions none of which held at any step of this trace
    /// (no label of theirs given by the trace or computed by their rules): `(the spec's file, or
    /// its name for a spec built in code; its propositions)`, in order. Their properties were
    /// read, but a `G !p` rule passes vacuously on an input the spec does not fit (a CSV file,
    /// prose, another agent's log). Specs without propositions (`--formula`s, labels taken as
    /// they are) and specs with a proposition of [`Coverage::never_hold`] (already explained)
    /// are left out. O(distinct labels + propositions).
    pub fn specs_never_held(
        &self,
        specs: &[CheckedSpec],
        model: bool,
    ) -> Vec<(String, Vec<String>)> {
        let never: Vec<String> = self
            .never_hold(specs, model)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        let held: FxHashSet<&str> = self
            .labels_seen
            .iter()
            .map(|l| trac_ltl::formula::split_atom_name(l).map_or(l.as_str(), |(b, _)| b))
            .collect();
        let mut out = Vec::new();
        for c in specs {
            let props = &c.spec.propositions;
            if props.is_empty()
                || props
                    .iter()
                    .any(|d| held.contains(d.name.as_str()) || never.contains(&d.name))
            {
                continue;
            }
            let name = c
                .spec
                .source
                .as_ref()
                .map_or_else(|| c.spec.name.clone(), |s| s.file.clone());
            out.push((name, props.iter().map(|d| d.name.clone()).collect()));
        }
        out
    }

    /// The atoms of `spec`'s properties that never held: `(property id, atom name)`, in property
    /// order, each atom once per property. An atom of a `--formula` that no step labeled is often
    /// a typo.
    pub fn never_labeled(&self, spec: &CheckedSpec) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for p in &spec.properties {
            for s in p.arena.atoms(p.formula) {
                let name = p.arena.sym_name(s);
                if !self.ever_labeled(name, p.var.as_deref()) {
                    let pair = (p.decl.id.clone(), name.to_string());
                    if !out.contains(&pair) {
                        out.push(pair);
                    }
                }
            }
        }
        out
    }
}
