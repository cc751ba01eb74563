//! The checker behind [`Spec::check`]: every formula parsed, every atom a declared
//! proposition with the right parameters, every rule's leaves compiled, each problem a
//! diagnostic pointing into the RON file.

use super::model::{
    CheckedProperty, CheckedSpec, Diagnostic, LabelerChoice, PropertyDecl, PropositionDecl, Spec,
    SpecError,
};
use super::rules::{is_identifier, is_word_char, Rule, RuleCompiler, SyntaxRules};
use super::source::{line_col, Item, Lit, SourceMap};
use std::collections::{HashMap, HashSet};
use trac_ltl::formula::{Arena, AtomName, Formula};
use trac_ltl::parser::{parse_property, ParseError};

impl Spec {
    /// Parses every property's formula (each in a fresh [`Arena`]) and checks the spec.
    ///
    /// Errors (all of them are reported, sorted by position in the file):
    /// - duplicate proposition names or property ids, empty names, parameters that are not
    ///   identifiers;
    /// - a labeling rule that does not compile (bad regex, malformed `Words` pattern), a
    ///   placeholder in a proposition without parameter or naming another parameter, a rule of a
    ///   parametric proposition that does not capture its parameter;
    /// - a formula that does not parse (with a caret rendering of the formula);
    /// - an atom that is not a declared proposition (unless the spec declares none), a parameter
    ///   given to a proposition that has none or missing for one that has one, a variable
    ///   (a declared parameter name) used without `forall`, a `forall` variable never used.
    ///
    /// Labeling rules are checked by [`SyntaxRules`] (regexes are not compiled); see
    /// [`Spec::check_with`].
    pub fn check(&self) -> Result<CheckedSpec, SpecError> {
        self.check_with(&SyntaxRules)
    }

    /// [`Spec::check`] with the leaves of labeling rules checked by `rules` (for a full check,
    /// `trac_runtime::label::labeler::check_spec` passes the regex compiler of the labelers).
    ///
    /// # Errors
    /// As [`Spec::check`], the messages of `rules` included.
    pub fn check_with(&self, rules: &dyn RuleCompiler) -> Result<CheckedSpec, SpecError> {
        let mut cx = CheckCx::new(self, rules);
        cx.check_propositions();
        let properties = cx.check_properties();
        if cx.diags.is_empty() {
            Ok(CheckedSpec {
                spec: self.clone(),
                properties,
            })
        } else {
            let mut diags = cx.diags;
            diags.sort_by_key(|d| d.position.unwrap_or((usize::MAX, usize::MAX)));
            Err(SpecError { diagnostics: diags })
        }
    }
}

struct CheckCx<'a> {
    spec: &'a Spec,
    file: String,
    text: &'a str,
    map: SourceMap,
    diags: Vec<Diagnostic>,
    rules: &'a dyn RuleCompiler,
}

impl<'a> CheckCx<'a> {
    fn new(spec: &'a Spec, rules: &'a dyn RuleCompiler) -> CheckCx<'a> {
        let (file, text) = match &spec.source {
            Some(s) => (s.file.clone(), s.text.as_str()),
            None => (format!("spec `{}`", spec.name), ""),
        };
        let map = SourceMap::build(text);
        CheckCx {
            spec,
            file,
            text,
            map,
            diags: Vec::new(),
            rules,
        }
    }

    fn error(&mut self, offset: Option<usize>, message: String) {
        let position = offset.map(|o| line_col(self.text, o));
        self.diags.push(Diagnostic {
            file: self.file.clone(),
            position,
            message,
        });
    }

    fn prop_item(&self, i: usize) -> Option<&Item> {
        self.map.propositions.get(i)
    }

    fn property_item(&self, i: usize) -> Option<&Item> {
        self.map.properties.get(i)
    }

    fn check_propositions(&mut self) {
        let spec = self.spec;
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, p) in spec.propositions.iter().enumerate() {
            let item = self.prop_item(i).cloned();
            let name_at = item.as_ref().map(|it| it.value_start("name"));
            if p.name.trim().is_empty() {
                self.error(name_at, "empty proposition name".into());
            } else if p.name.contains(['(', ')']) {
                self.error(
                    name_at,
                    format!(
                        "invalid proposition name `{}`: use `param` for a parameter, not parentheses",
                        p.name
                    ),
                );
            }
            if let Some(&first) = seen.get(p.name.as_str()) {
                let first_at = self
                    .prop_item(first)
                    .map(|it| line_col(self.text, it.value_start("name")));
                let msg = match first_at {
                    Some((l, c)) => format!(
                        "duplicate proposition `{}` (first declared at {l}:{c})",
                        p.name
                    ),
                    None => format!("duplicate proposition `{}`", p.name),
                };
                self.error(name_at, msg);
            } else {
                seen.insert(&p.name, i);
            }
            if let Some(param) = &p.param {
                if !param.split(',').all(|x| is_identifier(x.trim())) {
                    let at = item.as_ref().map(|it| it.value_start("param"));
                    self.error(
                        at,
                        format!(
                            "proposition `{}`: parameter `{param}` is not an identifier",
                            p.name
                        ),
                    );
                }
            }
            if let Some(rule) = &p.rule {
                self.check_rule(p, rule, item.as_ref());
            }
            if p.labeler == LabelerChoice::Both && p.rule.is_none() {
                let at = item.as_ref().map(|it| it.value_start("labeler"));
                self.error(
                    at,
                    format!(
                        "proposition `{}`: `labeler: Both` needs a `rule` (use `Llm` for a proposition without one)",
                        p.name
                    ),
                );
            }
            self.check_label_examples(p, item.as_ref());
        }
    }

    /// The `examples` of a proposition: each says whether it holds (`holds`, or the `values`
    /// it holds for, not both ways at once), has a text, and gives values only with a `param`.
    fn check_label_examples(&mut self, p: &PropositionDecl, item: Option<&Item>) {
        for (k, ex) in p.examples.iter().enumerate() {
            let src = item.and_then(|it| it.examples.get(k));
            let at = src
                .map(|e| e.0)
                .or_else(|| item.map(|it| it.value_start("examples")));
            let written = |f: &str| src.is_some_and(|e| e.1.iter().any(|g| g == f));
            let problem = if p.param.is_none() && !ex.values.is_empty() {
                "gives `values`, but the proposition has no `param`".to_string()
            } else if !ex.holds && !ex.values.is_empty() {
                "says `holds: false` but gives `values` (the values it holds for): keep one of them"
                    .to_string()
            } else if src.is_some()
                && !written("holds")
                && written("values")
                && ex.values.is_empty()
            {
                "gives empty `values` and no `holds`: list the values it holds for, or write `holds: false`"
                    .to_string()
            } else if src.is_some() && !written("holds") && ex.values.is_empty() {
                // Taken as a positive example before, which a typo made silently.
                "says neither `holds` nor `values`: write `holds: true` (the proposition holds at such a step) or `holds: false`"
                    .to_string()
            } else if ex.text.trim().is_empty() {
                "has an empty `text`".to_string()
            } else {
                continue;
            };
            self.error(
                at,
                format!("proposition `{}`: example {} {problem}", p.name, k + 1),
            );
        }
    }

    fn check_rule(&mut self, p: &PropositionDecl, rule: &Rule, item: Option<&Item>) {
        let lits: Vec<usize> = item
            .and_then(|it| it.fields.get("rule"))
            .map(|f| f.strings.iter().map(|s| s.start).collect())
            .unwrap_or_default();
        let rule_at = item.map(|it| it.value_start("rule"));
        let mut ok = true;
        if let Some(kind) = empty_combinator(rule) {
            // `AllOf([])` holds at every step and `AnyOf([])` at none: never what was meant.
            self.error(
                rule_at,
                format!(
                    "proposition `{}`: an empty {kind}([]) (it would hold {}); give it at least one rule",
                    p.name,
                    if kind == "AllOf" { "at every step" } else { "at no step" }
                ),
            );
            ok = false;
        }
        let mut lit = 0;
        for leaf in rule.leaves() {
            // A `Field`'s errors are about its regex, its second literal.
            let k = lit + usize::from(matches!(leaf, Rule::Field(..)));
            let at = lits.get(k).copied().or(rule_at);
            lit += leaf.literals();
            let names = match self.rules.leaf(leaf, self.spec.case_sensitive) {
                Ok(names) => names,
                Err(m) => {
                    self.error(at, format!("proposition `{}`: {m}", p.name));
                    ok = false;
                    continue;
                }
            };
            if let Rule::Words(_) | Rule::Arg { .. } | Rule::Result { .. } | Rule::Tool(_) = leaf {
                for name in names {
                    match &p.param {
                        None => {
                            self.error(
                                at,
                                format!(
                                    "proposition `{}`: placeholder `{{{name}}}` but the proposition has no `param`",
                                    p.name
                                ),
                            );
                            ok = false;
                        }
                        Some(param) if !param.split(',').any(|x| x.trim() == name) => {
                            self.error(
                                at,
                                format!(
                                    "proposition `{}`: placeholder `{{{name}}}` is not its parameter `{param}`",
                                    p.name
                                ),
                            );
                            ok = false;
                        }
                        _ => {}
                    }
                }
            }
        }
        if ok {
            if p.params().len() > 1
                && rule.leaves().iter().any(|l| match l {
                    Rule::Arg { capture, .. } | Rule::Result { capture, .. } => capture.is_some(),
                    Rule::Tool(t) => t.capture.is_some(),
                    _ => false,
                })
            {
                self.error(
                    rule_at,
                    format!(
                        "proposition `{}`: its parameters ({}) must be captured together by one match of a Words, Regex or Field leaf; an `Arg`, `Result` or `Tool` capture gives one value",
                        p.name,
                        p.params().join(", ")
                    ),
                );
            }
            for param in p.params() {
                if !captures(rule, param, self.rules) {
                    self.error(
                        rule_at,
                        format!(
                            "proposition `{}`: the rule does not capture parameter `{param}`: use `{{{param}}}` or `{{{param}...}}` in Words, `(?P<{param}>...)` in Regex{}",
                            p.name,
                            if matches!(rule, Rule::AnyOf(_)) {
                                " (every alternative of AnyOf must capture it)"
                            } else {
                                ""
                            }
                        ),
                    );
                }
            }
        }
    }

    fn check_properties(&mut self) -> Vec<CheckedProperty> {
        let spec = self.spec;
        let declared = Declared::new(spec);
        let mut out = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, decl) in spec.properties.iter().enumerate() {
            let item = self.property_item(i).cloned();
            self.check_property_id(i, decl, item.as_ref(), &mut seen);
            self.check_rule_examples(decl, item.as_ref());
            out.extend(self.check_property(decl, item.as_ref(), &declared));
        }
        out
    }

    /// The `examples` of a property: each has actions, and a violation step among them.
    fn check_rule_examples(&mut self, decl: &PropertyDecl, item: Option<&Item>) {
        for (k, ex) in decl.examples.iter().enumerate() {
            let problem =
                match ex.violation {
                    _ if ex.actions.is_empty() => "has no actions".to_string(),
                    _ if ex.actions.iter().any(|a| a.trim().is_empty()) => {
                        format!(
                    "has an empty action (step {}): every step of an example needs its text",
                    ex.actions.iter().position(|a| a.trim().is_empty()).unwrap_or(0) + 1
                )
                    }
                    Some(v) if v == 0 || v > ex.actions.len() => format!(
                        "says `violation: Some({v})`, but its steps are 1 to {}",
                        ex.actions.len()
                    ),
                    _ => continue,
                };
            let at = item.map(|it| it.value_start("examples"));
            self.error(
                at,
                format!("property `{}`: example {} {problem}", decl.id, k + 1),
            );
        }
    }

    /// The id of property `i`: not empty, not declared before (`seen`: the first index of each
    /// id so far).
    fn check_property_id<'s>(
        &mut self,
        i: usize,
        decl: &'s PropertyDecl,
        item: Option<&Item>,
        seen: &mut HashMap<&'s str, usize>,
    ) {
        let id_at = item.map(|it| it.value_start("id"));
        if decl.id.trim().is_empty() {
            self.error(id_at, "empty property id".into());
        }
        if let Some(&first) = seen.get(decl.id.as_str()) {
            let first_at = self
                .property_item(first)
                .map(|it| line_col(self.text, it.value_start("id")));
            let msg = match first_at {
                Some((l, c)) => format!(
                    "duplicate property id `{}` (first declared at {l}:{c})",
                    decl.id
                ),
                None => format!("duplicate property id `{}`", decl.id),
            };
            self.error(id_at, msg);
        } else {
            seen.insert(&decl.id, i);
        }
    }

    /// One property: its formula parsed, its atoms checked against the declared propositions
    /// and its quantified variables; `None` if the formula does not parse.
    fn check_property(
        &mut self,
        decl: &PropertyDecl,
        item: Option<&Item>,
        declared: &Declared<'_>,
    ) -> Option<CheckedProperty> {
        let lit = item
            .and_then(|it| it.fields.get("formula"))
            .and_then(|f| f.strings.first().cloned());
        let text = self.text;
        let locate =
            |off: usize| -> Option<usize> { lit.as_ref().map(|l| l.source_offset(text, off)) };
        let mut arena = Arena::new();
        let parsed = match parse_property(&mut arena, &decl.formula) {
            Ok(p) => p,
            Err(e) => {
                let at = locate(e.span.start);
                // The caret rendering shows the spec file's line, under the error's column.
                let in_file = at.zip(locate(e.span.end)).map(|(start, end)| ParseError {
                    message: e.message.clone(),
                    span: start..end.max(start),
                });
                let msg = match &in_file {
                    Some(fe) => parse_message(&decl.id, fe, self.text),
                    None => parse_message(&decl.id, &e, &decl.formula),
                };
                self.error(at, msg);
                return None;
            }
        };
        let vars: Vec<String> = parsed.vars().into_iter().map(String::from).collect();
        let mut pcx = PropertyCx {
            pid: &decl.id,
            formula: &decl.formula,
            text,
            lit: lit.clone(),
            used: vec![false; vars.len()],
            vars,
            quantified: parsed.var.as_deref(),
        };
        let todo = self.atoms_to_check(&arena, parsed.body, &mut pcx);
        for (parts, bound) in todo {
            self.check_atom(&mut pcx, &parts, bound.as_deref(), declared);
        }
        for (var, used) in pcx.vars.iter().zip(&pcx.used) {
            if !used {
                let pid = pcx.pid;
                self.error(
                    pcx.locate(find_atom(pcx.formula, var, var)),
                    format!(
                        "property `{pid}`: quantified variable `{var}` is not used in the formula"
                    ),
                );
            }
        }
        Some(CheckedProperty {
            decl: decl.clone(),
            arena,
            var: parsed.var,
            formula: parsed.body,
        })
    }

    /// The atoms of a property to check, with the variables bound where they occur: the
    /// property's `forall` variable, and inside `exists v: body` also `v` (the atoms of the
    /// body). Checks the `exists` quantifiers themselves.
    fn atoms_to_check(
        &mut self,
        arena: &Arena,
        body: Formula,
        pcx: &mut PropertyCx<'_>,
    ) -> Vec<(AtomName, Option<String>)> {
        let pid = pcx.pid;
        let mut todo: Vec<(AtomName, Option<String>)> = Vec::new();
        for sym in arena.atoms(body) {
            let parts = arena.sym_parts(sym).clone();
            let Some((evar, body)) = trac_ltl::parser::split_exists(&parts.name) else {
                todo.push((parts, None));
                continue;
            };
            let at = pcx.locate(pcx.formula.find("exists").unwrap_or(0));
            let mut inner = Arena::new();
            match trac_ltl::parse(&mut inner, body) {
                Ok(b) => {
                    if pcx.is_var(evar) {
                        self.error(at, format!(
                        "property `{pid}`: `exists {evar}: ...` reuses `{evar}`, a variable of the `forall`: name the quantifier's variable differently"
                    ));
                    }
                    let mut mentioned: Vec<String> = Vec::new();
                    for s in inner.atoms(b) {
                        let ip = inner.sym_parts(s).clone();
                        let args = ip.arg.clone().unwrap_or_default();
                        // The body may mention a `forall` variable: the quantifier is
                        // then evaluated per value of it (`trac_runtime::label::derived`).
                        for a in trac_core::names::split_list(&args) {
                            if a != evar {
                                pcx.mark(a);
                                if pcx.is_var(a) && !mentioned.iter().any(|m| m == a) {
                                    mentioned.push(a.to_string());
                                }
                            }
                        }
                        todo.push((ip, Some(evar.to_string())));
                    }
                    if mentioned.len() > 1 {
                        self.error(at, format!(
                        "property `{pid}`: `exists {evar}: ...` mentions {} variables of the `forall` ({}): a quantifier's body may mention one of them (not supported yet)",
                        mentioned.len(),
                        mentioned.join(", ")
                    ));
                    }
                }
                Err(e) => self.error(at, format!("property `{pid}`: {}", e.message)),
            }
        }
        todo
    }

    /// One atom of a property (`bound`: the variable of the `exists` it is in): a declared
    /// proposition, with as many arguments as it has parameters, each a quantified variable or
    /// a value.
    fn check_atom(
        &mut self,
        pcx: &mut PropertyCx<'_>,
        parts: &AtomName,
        bound: Option<&str>,
        declared: &Declared<'_>,
    ) {
        if parts.base == trac_core::names::COMPARISON_BASE {
            // `a = b`, `a != "x"`: no proposition; the parser checked its variables, and it
            // gives them no value (so it does not count as a use).
            return;
        }
        let pid = pcx.pid;
        let at = pcx.locate(find_atom(pcx.formula, &parts.name, &parts.base));
        let args: Vec<&str> = parts
            .arg
            .as_deref()
            .map(|a| trac_core::names::split_list(a).collect())
            .unwrap_or_default();
        if bound.is_none() {
            for a in &args {
                pcx.mark(a);
            }
        }
        if declared.props.is_empty() {
            return;
        }
        let Some(p) = declared.props.get(parts.base.as_str()) else {
            self.error(
                at,
                format!(
                    "property `{pid}`: unknown proposition `{}`; declared: {}",
                    parts.base,
                    declared.names.join(", ")
                ),
            );
            return;
        };
        let want = p.params();
        match (&p.param, &parts.arg) {
            (None, Some(arg)) => self.error(
                at,
                format!(
                    "property `{pid}`: proposition `{}` has no parameter, but is used as `{}({arg})`",
                    p.name, p.name
                ),
            ),
            (Some(param), None) => self.error(
                at,
                format!(
                    "property `{pid}`: proposition `{}` has parameter `{param}`: write `{}(<value>)`, or quantify it: `forall {param}: ... {}({param}) ...`",
                    p.name, p.name, p.name
                ),
            ),
            (Some(param), Some(_)) if args.len() != want.len() => self.error(
                at,
                format!(
                    "property `{pid}`: proposition `{}` has {} parameter{} ({param}), but `{}` gives {}",
                    p.name,
                    want.len(),
                    if want.len() == 1 { "" } else { "s" },
                    parts.name,
                    args.len()
                ),
            ),
            (Some(_), Some(_)) => {
                for arg in &args {
                    let is_bound = pcx.is_var(arg) || Some(*arg) == bound;
                    if !is_bound && declared.params.contains(arg) {
                        self.error(
                            at,
                            format!(
                                "property `{pid}`: variable `{arg}` in `{}` is not quantified: write `forall {arg}: ...`{}",
                                parts.name,
                                match pcx.quantified {
                                    Some(v) => format!(" (the formula quantifies `{v}`)"),
                                    None => String::new(),
                                }
                            ),
                        )
                    }
                }
            }
            (None, None) => {}
        }
    }
}

/// The declared propositions of a spec, as the checks of the properties' atoms read them.
struct Declared<'s> {
    /// By name.
    props: HashMap<&'s str, &'s PropositionDecl>,
    /// The parameters of the parametric ones.
    params: HashSet<&'s str>,
    /// Their names, sorted (for messages).
    names: Vec<&'s str>,
}

impl<'s> Declared<'s> {
    fn new(spec: &'s Spec) -> Declared<'s> {
        let props: HashMap<&str, &PropositionDecl> = spec
            .propositions
            .iter()
            .map(|p| (p.name.as_str(), p))
            .collect();
        let params: HashSet<&str> = spec.propositions.iter().flat_map(|p| p.params()).collect();
        let mut names: Vec<&str> = props.keys().copied().collect();
        names.sort_unstable();
        Declared {
            props,
            params,
            names,
        }
    }
}

/// What the checks of one property's atoms share.
struct PropertyCx<'p> {
    /// The property's id.
    pid: &'p str,
    /// The property's formula.
    formula: &'p str,
    /// The spec file's text.
    text: &'p str,
    /// The formula's string literal in the file, if known.
    lit: Option<Lit>,
    /// The variables of the `forall`.
    vars: Vec<String>,
    /// Per variable of the `forall`: whether some atom uses it.
    used: Vec<bool>,
    /// The `forall` variables as written (`x, y`), for messages.
    quantified: Option<&'p str>,
}

impl PropertyCx<'_> {
    /// The file offset of byte `off` of the formula, if the formula's literal is known.
    fn locate(&self, off: usize) -> Option<usize> {
        self.lit.as_ref().map(|l| l.source_offset(self.text, off))
    }

    /// Whether `a` is a variable of the `forall`.
    fn is_var(&self, a: &str) -> bool {
        self.vars.iter().any(|v| v == a)
    }

    /// Marks the `forall` variable `a` (if it is one) used.
    fn mark(&mut self, a: &str) {
        if let Some(i) = self.vars.iter().position(|v| v == a) {
            self.used[i] = true;
        }
    }
}

/// `property `id`: message` followed by the parser's caret rendering of `src` (the spec file's
/// text, with the error's span in it; or the formula alone, where its position in the file is
/// unknown), indented.
fn parse_message(id: &str, e: &ParseError, src: &str) -> String {
    let rendered = e.render(src);
    let mut lines: Vec<&str> = rendered.lines().collect();
    // The rendering usually starts with the message itself; do not repeat it.
    let first_is_message = lines.first().is_some_and(|l| {
        let l = l.trim();
        l == e.message.trim() || l.strip_prefix("error:").map(str::trim) == Some(e.message.trim())
    });
    if first_is_message {
        lines.remove(0);
    }
    let mut msg = format!("property `{id}`: {}", e.message);
    for l in lines {
        msg.push_str("\n    ");
        msg.push_str(l);
    }
    msg
}

/// Whether every way the rule can hold yields a value for `param`.
/// The first empty `AllOf` / `AnyOf` in `rule`, by name.
fn empty_combinator(rule: &Rule) -> Option<&'static str> {
    match rule {
        Rule::AllOf(v) if v.is_empty() => Some("AllOf"),
        Rule::AnyOf(v) if v.is_empty() => Some("AnyOf"),
        Rule::AllOf(v) | Rule::AnyOf(v) => v.iter().find_map(empty_combinator),
        Rule::Not(r) | Rule::Input(r) | Rule::Output(r) => empty_combinator(r),
        _ => None,
    }
}

fn captures(rule: &Rule, param: &str, rules: &dyn RuleCompiler) -> bool {
    match rule {
        Rule::Words(_)
        | Rule::Regex(_)
        | Rule::Field(..)
        | Rule::Arg { .. }
        | Rule::Result { .. }
        | Rule::Tool(_) => rules
            .leaf(rule, true)
            .is_ok_and(|names| names.iter().any(|n| n == param)),
        Rule::AnyOf(v) => !v.is_empty() && v.iter().all(|r| captures(r, param, rules)),
        Rule::AllOf(v) => v.iter().any(|r| captures(r, param, rules)),
        Rule::Input(r) | Rule::Output(r) => captures(r, param, rules),
        Rule::Not(_) | Rule::Role(_) => false,
    }
}

/// Byte offset in `formula` where the atom is written (0 if not found).
fn find_atom(formula: &str, name: &str, base: &str) -> usize {
    let bounded = |needle: &str| -> Option<usize> {
        if needle.is_empty() {
            return None;
        }
        let mut from = 0;
        while let Some(k) = formula[from..].find(needle) {
            let s = from + k;
            let e = s + needle.len();
            let before = formula[..s].chars().next_back();
            let after = formula[e..].chars().next();
            let ok_before = !before.is_some_and(is_word_char);
            let ok_after = !after.is_some_and(is_word_char) || needle.ends_with(')');
            if ok_before && ok_after {
                return Some(s);
            }
            from = s + needle.len().max(1);
        }
        None
    };
    bounded(name).or_else(|| bounded(base)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_without_a_regex_engine_reads_named_groups() {
        let src = r#"(name: "x", propositions: [
  (name: "a", param: Some("v"), rule: Some(Regex("a[(?P<v>x)"))),
  (name: "b", param: Some("v"), rule: Some(Regex("b (x)"))),
], properties: [])"#;
        let e = Spec::from_str(src, "s.ron").unwrap().check().unwrap_err();
        // The bad class of `a` is left to the labelers' compile step; `b` captures nothing.
        assert_eq!(e.diagnostics.len(), 1, "{e}");
        assert!(
            e.to_string()
                .contains("proposition `b`: the rule does not capture"),
            "{e}"
        );
    }
}

#[cfg(test)]
mod rule_example_tests {
    use super::*;

    #[test]
    fn rule_examples_are_read_and_their_violation_step_checked() {
        let ok = r#"(name: "x", propositions: [(name: "a")], properties: [
  (id: "R1", formula: "G !a", examples: [
    (actions: ["look", "a"], violation: Some(2), why: "a is forbidden"),
    (actions: ["look"]),
  ]),
])"#;
        let c = Spec::from_str(ok, "s.ron").unwrap().check().unwrap();
        let ex = &c.properties[0].decl.examples;
        assert_eq!(ex.len(), 2);
        assert_eq!(ex[0].violation, Some(2));
        assert_eq!(ex[1].violation, None);
        let bad = r#"(name: "x", propositions: [(name: "a")], properties: [
  (id: "R1", formula: "G !a", examples: [(actions: ["a"], violation: Some(3))]),
])"#;
        let e = Spec::from_str(bad, "s.ron").unwrap().check().unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("s.ron:2:")
                && msg.contains("example 1 says `violation: Some(3)`, but its steps are 1 to 1"),
            "{msg}"
        );
        let blank = r#"(name: "x", propositions: [(name: "a")], properties: [
  (id: "R1", formula: "G !a", examples: [(actions: ["look", " "], violation: Some(2))]),
])"#;
        let msg = Spec::from_str(blank, "s.ron")
            .unwrap()
            .check()
            .unwrap_err()
            .to_string();
        assert!(
            msg.contains("s.ron:2:") && msg.contains("example 1 has an empty action (step 2)"),
            "{msg}"
        );
    }
}
