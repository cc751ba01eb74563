//! The checked model of a monitor: propositions, properties and their compiled tables, built
//! from inline macro input or from a spec file, with every error collected.

use crate::input::{Body, Inline, MonitorInput, PropertyInput};
use proc_macro2::Span;
use std::collections::HashMap;
use std::path::PathBuf;
use syn::{Attribute, Ident, LitStr, Visibility};
use trac_core::table::Table;
use trac_ltl::formula::{Arena, Formula};
use trac_ltl::ParseError;
use trac_spec::spec::{CheckedSpec, Semantics, Spec};

/// Method names of the generated monitor that a property accessor must not take.
const RESERVED: &[&str] = &[
    "new",
    "with_reset",
    "initial",
    "step",
    "step_labels",
    "verdicts",
    "residuals",
    "ltlf",
    "reset",
    "tables",
    "special_tables",
    "last_verdicts",
    "for_each_event",
    "default",
    "clone",
    "fmt",
];

/// Whether a property's accessor would clash with a generated method.
pub(crate) fn is_reserved(name: &str) -> bool {
    RESERVED.contains(&name) || name.ends_with("_mut")
}

/// A proposition: one field of the valuation.
pub struct Prop {
    /// The label name (the base name for a parametric proposition).
    pub name: String,
    /// The valuation field.
    pub field: Ident,
    /// The parameter of a parametric proposition.
    pub param: Option<String>,
    /// Documentation of the field.
    pub doc: String,
}

/// A property: one monitor of the generated type.
pub struct Property {
    /// The id reported (`R1`, `p2_before_p1`).
    pub id: String,
    /// The monitor field and accessor.
    pub field: Ident,
    /// Documentation lines.
    pub doc: Vec<String>,
    /// The formula as written.
    pub formula: String,
    /// The quantified variable of `forall x: φ`.
    pub var: Option<String>,
    /// TRAC_R restarts after a satisfaction too.
    pub reset_on_satisfaction: bool,
    /// The compiled table of the body (`None` after an error: stub output).
    pub table: Option<Table>,
    /// For a parametric property, the tables of `φ[var:=c]` for the values `c` written in the
    /// formula ([`trac_core::generated::special_values`]).
    pub specials: Vec<(String, Table)>,
}

/// Everything the emitter needs.
pub struct Model {
    /// Attributes passed to the monitor struct (doc comments and others).
    pub attrs: Vec<Attribute>,
    /// Extra documentation lines of the monitor struct.
    pub doc: Vec<String>,
    /// Visibility of the generated types.
    pub vis: Visibility,
    /// The monitor type.
    pub ident: Ident,
    /// The path of `trac-runtime` in generated code.
    pub krate: syn::Path,
    /// The valuation's fields, in declaration order.
    pub props: Vec<Prop>,
    /// The properties, in declaration order.
    pub properties: Vec<Property>,
    /// A spec file to `include_bytes!` (so that cargo rebuilds when it changes).
    pub include: Option<String>,
}

impl Model {
    /// Whether a proposition is parametric (the valuation then has a lifetime).
    pub fn has_params(&self) -> bool {
        self.props.iter().any(|p| p.param.is_some())
    }
}

/// Collects errors (`syn::Error::combine`).
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    /// Adds an error at `span`.
    pub fn push(&mut self, span: Span, message: impl std::fmt::Display) {
        let e = syn::Error::new(span, message);
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// Adds an error.
    pub fn add(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    /// The combined error, if any.
    pub fn into_error(self) -> Option<syn::Error> {
        self.0
    }

    fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// Options of a model built from a checked spec (the xtask's entry).
pub struct SpecOptions<'a> {
    /// The monitor type's name.
    pub type_name: &'a str,
    /// Path of `trac-core` in the generated code (`::trac_core` when empty; `::trac_runtime`,
    /// which re-exports it, works too).
    pub krate: &'a str,
    /// The spec file's name, for the documentation.
    pub file: Option<&'a str>,
}

/// A Rust identifier made of a name written in a spec: lowercase, other characters `_`,
/// `_` in front of a leading digit, `_` after a keyword.
pub fn snake_ident(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with(|c: char| c.is_ascii_digit()) {
        s.insert(0, '_');
    }
    if syn::parse_str::<Ident>(&s).is_err() {
        s.push('_');
    }
    s
}

/// `textworld` → `Textworld`, `my-spec_file` → `MySpecFile`.
pub fn camel_ident(name: &str) -> String {
    let mut out = String::new();
    for part in name.split(|c: char| !c.is_ascii_alphanumeric()) {
        let mut cs = part.chars();
        if let Some(c) = cs.next() {
            out.push(c.to_ascii_uppercase());
            out.extend(cs);
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert(0, 'M');
    }
    out
}

/// Compiles one property body into a minimized table.
fn compile_table(
    arena: &mut Arena,
    formula: Formula,
    semantics: Semantics,
) -> Result<Table, String> {
    let opts = trac_compile::CompileOptions {
        semantics,
        minimize: trac_compile::Minimize::Language,
    };
    trac_compile::compile(arena, formula, &opts)
        .map(|c| c.table)
        .map_err(|e| e.to_string())
}

/// The compiled tables of one property: its body, and for a parametric one the instances of
/// the values written in the formula.
type Compiled = (Table, Vec<(String, Table)>);

/// Refuses the atoms of `f` that generated monitors cannot slice by `var`: a proposition with
/// several parameters, a pattern or an `exists` mentioning it.
fn check_sliced(arena: &Arena, f: Formula, var: &str) -> Result<(), String> {
    for s in arena.atoms(f) {
        let name = arena.sym_name(s);
        if trac_core::names::comparison_sides(name).is_some() {
            continue; // `to = "x"`: read by `emit::comparison_expr`, not sliced.
        }
        let parts = trac_ltl::formula::AtomName::parse(name);
        let multi = parts
            .arg
            .as_deref()
            .is_some_and(|a| a.contains(", ") && trac_core::names::split_list(a).any(|x| x == var));
        let derived = trac_ltl::parser::split_exists(name).is_some()
            || parts
                .arg
                .as_deref()
                .is_some_and(|a| a.contains(['*', '?', '|']));
        if multi
            || (derived && trac_ltl::parser::instantiate_exists(name, var, "v").is_some())
            || (derived && name != trac_core::names::instantiate_name(name, var, "v"))
        {
            return Err(format!(
                "`{name}` mentions `{var}` in a proposition with several parameters, a pattern or an `exists`: generated monitors do not slice such atoms (audit the property with `trac audit`)"
            ));
        }
    }
    Ok(())
}

/// Compiles one property's body (and its special instances) into tables.
fn compile(
    arena: &mut Arena,
    f: Formula,
    var: Option<&str>,
    semantics: Semantics,
) -> Result<Compiled, String> {
    let vars: Vec<&str> = var
        .map(|v| trac_core::names::split_list(v).collect())
        .unwrap_or_default();
    for var in &vars {
        check_sliced(arena, f, var)?;
    }
    let table = compile_table(arena, f, semantics)?;
    let mut specials = Vec::new();
    if vars.len() > 1 {
        // `ParamTupleMonitor` has no special tables: refuse what would need them.
        let slicing = trac_core::parametric::Slicing::new(table.prop_names(), var.unwrap_or(""));
        for (k, x) in vars.iter().enumerate() {
            let cs = slicing.constants_beside(k);
            if !cs.is_empty() {
                return Err(format!(
                    "`{x}` sits where the formula also writes the value `{}`: generated monitors with several variables have no tables for such values (audit the property with `trac audit`)",
                    cs[0]
                ));
            }
        }
        if slicing.may_merge() {
            return Err(format!(
                "two variables of `forall {}` are arguments of the same proposition at the same place: generated monitors with several variables do not slice such atoms (audit the property with `trac audit`)",
                var.unwrap_or("")
            ));
        }
    } else if let Some(var) = var {
        for c in trac_core::generated::special_values(table.prop_names(), var) {
            let g = arena.instantiate(f, var, &c);
            let t = compile_table(arena, g, semantics)
                .map_err(|e| format!("the instance `{var} = {c}`: {e}"))?;
            specials.push((c, t));
        }
    }
    Ok((table, specials))
}

/// The message of a formula error: `property `id`: message (at byte N)` and the caret.
pub fn formula_message(id: &str, e: &ParseError, formula: &str) -> String {
    let rendered = e.render(formula);
    let mut msg = format!(
        "property `{id}`: {} (at byte {} of the formula)",
        e.message, e.span.start
    );
    for l in rendered.lines().skip(1) {
        msg.push('\n');
        msg.push_str(l);
    }
    msg
}

/// Free text (from a spec) made safe for rustdoc: no HTML tags, no links.
fn doc_text(s: &str) -> String {
    s.replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('[', "\\[")
        .replace(']', "\\]")
}

/// Byte offset of an atom in a formula (0 if not found).
fn find_atom(formula: &str, name: &str) -> usize {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(k) = formula[from..].find(name) {
        let s = from + k;
        let e = s + name.len();
        let ok_before = !formula[..s].chars().next_back().is_some_and(word);
        let ok_after = !formula[e..].chars().next().is_some_and(word) || name.ends_with(')');
        if ok_before && ok_after {
            return s;
        }
        from = e.max(s + 1);
    }
    0
}

fn atom_message(id: &str, formula: &str, atom: &str, message: String) -> String {
    let at = find_atom(formula, atom);
    let e = ParseError {
        message,
        span: at..at + atom.len(),
    };
    formula_message(id, &e, formula)
}

fn split_attrs(attrs: &[Attribute], errors: &mut Errors) -> (Vec<Attribute>, Option<syn::Path>) {
    let mut keep = Vec::new();
    let mut krate = None;
    for a in attrs {
        if a.path().is_ident("trac") {
            let r = a.parse_nested_meta(|meta| {
                if meta.path.is_ident("crate") {
                    let lit: LitStr = meta.value()?.parse()?;
                    krate = Some(lit.parse::<syn::Path>()?);
                    Ok(())
                } else {
                    Err(meta.error("unknown `trac` option; expected `crate = \"path\"`"))
                }
            });
            if let Err(e) = r {
                errors.add(e);
            }
        } else {
            keep.push(a.clone());
        }
    }
    (keep, krate)
}

fn doc_lines(attrs: &[Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn default_krate() -> syn::Path {
    syn::parse_quote!(::trac_core)
}

/// Builds the model of macro input. On errors the model is still complete enough for stub
/// output (every declared proposition and property, without tables).
pub fn from_input(input: MonitorInput) -> (Model, Option<syn::Error>) {
    let mut errors = Errors::default();
    let (attrs, krate) = split_attrs(&input.attrs, &mut errors);
    let mut model = Model {
        attrs,
        doc: Vec::new(),
        vis: input.vis,
        ident: input.ident,
        krate: krate.unwrap_or_else(default_krate),
        props: Vec::new(),
        properties: Vec::new(),
        include: None,
    };
    match input.body {
        Body::Inline(inline) => inline_model(&mut model, inline, &mut errors),
        Body::File(path) => file_model(&mut model, &path, &mut errors),
    }
    (model, errors.into_error())
}

fn inline_model(model: &mut Model, inline: Inline, errors: &mut Errors) {
    inline_props(model, &inline, errors);
    let declared = Declared::new(&model.props);
    let mut seen_ids: HashMap<String, Span> = HashMap::new();
    let mut properties = Vec::new();
    for pi in &inline.properties {
        let id = pi.ident.to_string();
        let dup = seen_ids.contains_key(&id);
        if dup {
            errors.push(pi.ident.span(), format!("duplicate property `{id}`"));
        } else {
            seen_ids.insert(id.clone(), pi.ident.span());
        }
        let property = inline_property(pi, id, &declared, errors);
        if !dup {
            properties.push(property);
        }
    }
    if inline.properties.is_empty() {
        errors.push(
            inline.props_span,
            "no property: declare at least one as `id: \"formula\"`",
        );
    }
    model.properties = properties;
    if !errors.is_empty() {
        for p in &mut model.properties {
            p.table = None;
        }
    }
}

/// The declared propositions of an inline monitor, into `model.props`.
fn inline_props(model: &mut Model, inline: &Inline, errors: &mut Errors) {
    let mut seen: HashMap<String, Span> = HashMap::new();
    for p in &inline.props {
        let name = p.ident.to_string();
        if seen.contains_key(&name) {
            errors.push(p.ident.span(), format!("duplicate proposition `{name}`"));
            continue;
        }
        seen.insert(name.clone(), p.ident.span());
        let mut doc = doc_text(&p.description.value());
        for l in doc_lines(&p.attrs) {
            doc.push('\n');
            doc.push_str(&l);
        }
        if let Some(a) = p.attrs.iter().find(|a| !a.path().is_ident("doc")) {
            errors.add(syn::Error::new_spanned(
                a,
                "only doc comments are allowed on a proposition",
            ));
        }
        model.props.push(Prop {
            name,
            field: p.ident.clone(),
            param: p.param.as_ref().map(|i| i.to_string()),
            doc,
        });
    }
}

/// The declared propositions, as the checks of the properties' atoms read them.
struct Declared<'a> {
    /// By name.
    props: HashMap<&'a str, &'a Prop>,
    /// Their names, sorted, for messages (`` `a`, `b` ``, or "none ...").
    list: String,
    /// The parameters of the parametric ones.
    params: Vec<&'a str>,
}

impl<'a> Declared<'a> {
    fn new(props: &'a [Prop]) -> Declared<'a> {
        let declared: HashMap<&str, &Prop> = props.iter().map(|p| (p.name.as_str(), p)).collect();
        let mut names: Vec<&str> = declared.keys().copied().collect();
        names.sort_unstable();
        let declared_list = if names.is_empty() {
            "none (declare them in `props { .. }`)".to_string()
        } else {
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let params: Vec<&str> = props.iter().filter_map(|p| p.param.as_deref()).collect();
        Declared {
            props: declared,
            list: declared_list,
            params,
        }
    }
}

/// The semantics and `reset_on_satisfaction` flag of an inline property, from its attributes.
fn property_attrs(pi: &PropertyInput, errors: &mut Errors) -> (Semantics, bool) {
    let mut semantics = Semantics::Ltl3;
    let mut reset_on_satisfaction = false;
    for a in &pi.attrs {
        if a.path().is_ident("doc") {
            continue;
        }
        if a.path().is_ident("ltlf") && matches!(a.meta, syn::Meta::Path(_)) {
            semantics = Semantics::Ltlf;
        } else if a.path().is_ident("reset_on_satisfaction") && matches!(a.meta, syn::Meta::Path(_))
        {
            reset_on_satisfaction = true;
        } else {
            errors.add(syn::Error::new_spanned(
                a,
                "unknown attribute on a property; expected doc comments, `#[ltlf]` or `#[reset_on_satisfaction]`",
            ));
        }
    }
    (semantics, reset_on_satisfaction)
}

/// One inline property, checked and compiled (`table` is `None` after an error).
fn inline_property(
    pi: &PropertyInput,
    id: String,
    declared: &Declared<'_>,
    errors: &mut Errors,
) -> Property {
    let span = pi.formula.span();
    let src = pi.formula.value();
    if is_reserved(&id) {
        errors.push(
            pi.ident.span(),
            format!("property `{id}`: the name clashes with a method of the generated monitor; rename it"),
        );
    }
    let (semantics, reset_on_satisfaction) = property_attrs(pi, errors);
    let mut doc = doc_lines(&pi.attrs);
    doc.push(String::new());
    doc.push(format!("Formula: `{src}`"));
    let mut arena = Arena::new();
    let mut property = Property {
        id: id.clone(),
        field: pi.ident.clone(),
        doc,
        formula: src.clone(),
        var: None,
        reset_on_satisfaction,
        table: None,
        specials: Vec::new(),
    };
    let parsed = match trac_ltl::parse_property(&mut arena, &src) {
        Ok(p) => p,
        Err(e) => {
            errors.push(span, formula_message(&id, &e, &src));
            return property;
        }
    };
    property.var = parsed.var.clone();
    let (mut ok, unused) = check_atoms(&arena, &parsed, declared, (&id, &src, span), errors);
    for var in &unused {
        errors.push(
            span,
            atom_message(
                &id,
                &src,
                var,
                format!("quantified variable `{var}` is not used in the formula"),
            ),
        );
        ok = false;
    }
    if ok {
        match compile(&mut arena, parsed.body, parsed.var.as_deref(), semantics) {
            Ok((t, sp)) => {
                property.table = Some(t);
                property.specials = sp;
            }
            Err(m) => errors.push(span, format!("property `{id}`: {m}")),
        }
    }
    property
}

/// Checks the atoms of an inline property against the declared propositions; returns whether
/// they are all fine and the quantified variables not used in any atom.
fn check_atoms(
    arena: &Arena,
    parsed: &trac_ltl::ParsedProperty,
    declared: &Declared<'_>,
    (id, src, span): (&str, &str, Span),
    errors: &mut Errors,
) -> (bool, Vec<String>) {
    let mut ok = true;
    let vars: Vec<&str> = parsed
        .var
        .as_deref()
        .map(|v| trac_core::names::split_list(v).collect())
        .unwrap_or_default();
    let mut unused: Vec<String> = vars.iter().map(|v| v.to_string()).collect();
    for sym in arena.atoms(parsed.body) {
        let parts = arena.sym_parts(sym).clone();
        if parts.base == trac_core::names::COMPARISON_BASE {
            // `a = "x"`: no proposition (its bits: `emit::prop_expr`).
            continue;
        }
        let mut bad = |message: String| {
            errors.push(span, atom_message(id, src, &parts.name, message));
            ok = false;
        };
        if let Some(arg) = &parts.arg {
            unused.retain(|v| v != arg);
        }
        let Some(p) = declared.props.get(parts.base.as_str()) else {
            bad(format!(
                "unknown proposition `{}`; declared: {}",
                parts.base, declared.list
            ));
            continue;
        };
        match (&p.param, &parts.arg) {
            (None, Some(arg)) => bad(format!(
                "proposition `{}` has no parameter, but is used as `{}({arg})`",
                p.name, p.name
            )),
            (Some(param), None) => bad(format!(
                "proposition `{}` has parameter `{param}`: write `{}(<value>)`, or quantify it: `forall {param}: ... {}({param}) ...`",
                p.name, p.name, p.name
            )),
            (Some(_), Some(arg)) => {
                if !vars.contains(&arg.as_str()) && declared.params.contains(&arg.as_str()) {
                    bad(format!(
                        "variable `{arg}` in `{}` is not quantified: write `forall {arg}: ...`",
                        parts.name
                    ));
                }
            }
            (None, None) => {}
        }
    }
    (ok, unused)
}

fn file_model(model: &mut Model, lit: &LitStr, errors: &mut Errors) {
    let span = lit.span();
    let rel = lit.value();
    let base = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_default();
    let path = base.join(&rel);
    let spec = Spec::from_path(&path).and_then(|s| s.check());
    let spec = match spec {
        Ok(s) => s,
        Err(e) => {
            errors.push(span, format!("cannot use spec `{rel}`:\n{e}"));
            return;
        }
    };
    model.include = Some(path.display().to_string());
    let shown = path
        .file_name()
        .map(|f| f.to_string_lossy().to_string())
        .unwrap_or_default();
    if let Err(m) = spec_into(model, &spec, Some(&shown)) {
        errors.push(span, format!("spec `{rel}`: {m}"));
        for p in &mut model.properties {
            p.table = None;
        }
    }
}

/// Fills `model` from a checked spec. Errors (as one message): names that do not make distinct
/// Rust identifiers, a spec without propositions, a property that does not compile.
fn spec_into(
    model: &mut Model,
    spec: &CheckedSpec,
    file: Option<&str>,
) -> Result<(), GenerateError> {
    let mut problems = Vec::new();
    let s = &spec.spec;
    if !s.description.is_empty() {
        model.doc.push(doc_text(&s.description));
    }
    if !model.doc.is_empty() {
        model.doc.push(String::new());
    }
    match file {
        Some(f) => model
            .doc
            .push(format!("Generated from spec `{}` (`{f}`).", s.name)),
        None => model.doc.push(format!("Generated from spec `{}`.", s.name)),
    }
    if s.propositions.is_empty() {
        problems.push(
            "the spec declares no propositions; a generated monitor needs them to build its valuation type"
                .to_string(),
        );
    }
    let mut fields: HashMap<String, String> = HashMap::new();
    for p in &s.propositions {
        let f = snake_ident(&p.name);
        if let Some(other) = fields.insert(f.clone(), p.name.clone()) {
            problems.push(format!(
                "propositions `{other}` and `{}` both become the field `{f}`",
                p.name
            ));
        }
        model.props.push(Prop {
            name: p.name.clone(),
            field: Ident::new(&f, Span::call_site()),
            param: p.param.clone(),
            doc: if p.description.is_empty() {
                format!("`{}`", p.name)
            } else {
                doc_text(&p.description)
            },
        });
    }
    // Derived atoms (`exists p: ...` quantifiers, argument patterns such as `call(update_*)`):
    // one boolean field each, holding iff its name is among the labels, as
    // `trac_runtime::label::derived::DerivedAtoms::extend` inserts it.
    for cp in &spec.properties {
        for sym in cp.arena.atoms(cp.formula) {
            let name = cp.arena.sym_name(sym);
            let derived = trac_ltl::parser::split_exists(name).is_some()
                || trac_ltl::formula::split_atom_name(name)
                    .is_some_and(|(_, args)| args.contains(['*', '?', '|']));
            if !derived || model.props.iter().any(|p| p.name == name) {
                continue;
            }
            let words: Vec<String> = snake_ident(name)
                .split('_')
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect();
            let f = format!("derived_{}", words.join("_"));
            if let Some(other) = fields.insert(f.clone(), name.to_string()) {
                problems.push(format!(
                    "atoms `{other}` and `{name}` both become the field `{f}`"
                ));
            }
            model.props.push(Prop {
                name: name.to_string(),
                field: Ident::new(&f, Span::call_site()),
                param: None,
                doc: format!(
                    "Derived atom `{name}`: computed from the labels by `trac_runtime::label::derived::DerivedAtoms` (`from_labels` reads it as the label of that name)."
                ),
            });
        }
    }
    let mut fields: HashMap<String, String> = HashMap::new();
    for cp in &spec.properties {
        let d = &cp.decl;
        let f = snake_ident(&d.id);
        if let Some(other) = fields.insert(f.clone(), d.id.clone()) {
            problems.push(format!(
                "properties `{other}` and `{}` both become the accessor `{f}`",
                d.id
            ));
        }
        if is_reserved(&f) {
            problems.push(format!(
                "property `{}`: its accessor `{f}` clashes with a method of the generated monitor",
                d.id
            ));
        }
        let mut doc = Vec::new();
        if !d.description.is_empty() {
            doc.push(doc_text(&d.description));
            doc.push(String::new());
        }
        doc.push(format!("Property `{}`: `{}`", d.id, d.formula));
        let mut arena = cp.arena.clone();
        let (table, specials) =
            match compile(&mut arena, cp.formula, cp.var.as_deref(), d.semantics) {
                Ok((t, sp)) => (Some(t), sp),
                Err(m) => {
                    problems.push(format!("property `{}`: {m}", d.id));
                    (None, Vec::new())
                }
            };
        model.properties.push(Property {
            id: d.id.clone(),
            field: Ident::new(&f, Span::call_site()),
            doc,
            formula: d.formula.clone(),
            var: cp.var.clone(),
            reset_on_satisfaction: d.reset_on_satisfaction,
            table,
            specials,
        });
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(GenerateError::Spec(problems))
    }
}

/// Why no monitor could be generated for a spec ([`crate::generate_spec`]).
#[derive(Clone, Debug, thiserror::Error)]
pub enum GenerateError {
    /// The crate path given for the generated code does not parse as a Rust path.
    #[error("bad crate path `{path}`: {source}")]
    CratePath {
        /// The path as given.
        path: String,
        /// Why it does not parse.
        #[source]
        source: syn::Error,
    },
    /// The type name given is not a Rust identifier.
    #[error("`{0}` is not a type name")]
    TypeName(String),
    /// Problems of the spec, one message each: names that do not make distinct Rust
    /// identifiers, a spec without propositions, a property that does not compile.
    #[error("{}", .0.join("\n"))]
    Spec(Vec<String>),
}

/// The model of a checked spec (for `cargo xtask codegen`).
///
/// # Errors
/// A [`GenerateError`]: names that do not make distinct Rust identifiers, a spec without
/// propositions, a property that does not compile, a bad crate path or type name.
pub fn from_spec(spec: &CheckedSpec, opts: &SpecOptions<'_>) -> Result<Model, GenerateError> {
    let krate = if opts.krate.is_empty() {
        default_krate()
    } else {
        syn::parse_str(opts.krate).map_err(|source| GenerateError::CratePath {
            path: opts.krate.to_string(),
            source,
        })?
    };
    let ident = syn::parse_str::<Ident>(opts.type_name)
        .map_err(|_| GenerateError::TypeName(opts.type_name.to_string()))?;
    let mut model = Model {
        attrs: Vec::new(),
        doc: Vec::new(),
        vis: syn::parse_quote!(pub),
        ident,
        krate,
        props: Vec::new(),
        properties: Vec::new(),
        include: None,
    };
    spec_into(&mut model, spec, opts.file)?;
    Ok(model)
}
