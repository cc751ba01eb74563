//! Rust code of a [`Model`]: the valuation, the verdicts, the monitor with its `static` tables.

use crate::model::{Model, Property};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use trac_core::table::{FusedPacked, Table};
use trac_core::{ResetPolicy, Semantics};
use trac_ltl::formula::AtomName;

fn u32s(v: &[u32]) -> TokenStream {
    let lits = v.iter().map(|&n| Literal::u32_unsuffixed(n));
    quote!(&[#(#lits),*])
}

fn docs(lines: &[String]) -> TokenStream {
    let lines = lines.iter().map(|l| {
        let l = if l.is_empty() {
            String::new()
        } else {
            format!(" {l}")
        };
        quote!(#[doc = #l])
    });
    quote!(#(#lines)*)
}

/// The variables of a property quantifying several (`forall to, u: ..`), in order; `None` for
/// one variable or none (those run [`trac_core::generated::ParamTableMonitor`], these
/// [`trac_core::generated::ParamTupleMonitor`]).
fn tuple_vars(property: &Property) -> Option<Vec<&str>> {
    let var = property.var.as_deref()?;
    let vars: Vec<&str> = trac_core::names::split_list(var).collect();
    (vars.len() > 1).then_some(vars)
}

/// The type of a parametric property's monitor.
fn param_type(k: &syn::Path, property: &Property) -> TokenStream {
    if tuple_vars(property).is_some() {
        quote!(#k::generated::ParamTupleMonitor<&'static [u32], &'static str>)
    } else {
        quote!(#k::generated::ParamTableMonitor<&'static [u32], &'static str>)
    }
}

/// The expression of a table proposition's truth value, `v` being the valuation and `value`
/// the instance's value for a parametric property.
fn prop_expr(model: &Model, property: &Property, name: &str) -> TokenStream {
    if let Some(sides) = trac_core::names::comparison_sides(name) {
        return comparison_expr(property, sides);
    }
    if let Some(p) = model
        .props
        .iter()
        .find(|p| p.param.is_none() && p.name == name)
    {
        // A plain proposition, or a derived atom (`exists p: ...`, `call(update_*)`).
        let field = &p.field;
        return quote!(v.#field);
    }
    let parts = AtomName::parse(name);
    let Some(p) = model.props.iter().find(|p| p.name == parts.base) else {
        return quote!(false);
    };
    let field = &p.field;
    match (&p.param, &parts.arg) {
        (None, None) => quote!(v.#field),
        (Some(_), Some(arg)) if property.var.as_ref() == Some(arg) => {
            quote!(v.#field.contains(value))
        }
        (Some(_), Some(arg))
            if tuple_vars(property).is_some_and(|vs| vs.contains(&arg.as_str())) =>
        {
            // `key[k]`: the value of variable `k`, `None` for values not seen yet (false).
            let vs = tuple_vars(property).unwrap_or_default();
            let k = Literal::usize_unsuffixed(vs.iter().position(|x| x == arg).unwrap_or(0));
            quote!(key[#k].is_some_and(|x| v.#field.contains(x)))
        }
        (Some(_), Some(arg)) => quote!(v.#field.contains(#arg)),
        // Excluded by the checks; a proposition that never holds keeps this total.
        _ => quote!(false),
    }
}

/// The truth value of a comparison `=(l, r)` ([`trac_core::names::COMPARISON_BASE`]) for the
/// instance of `value`: a side is the property's variable (`value`) or a quoted value. The
/// template reads `value` = the variable's name, which no compared value is (the parser refuses
/// it), so a comparison with a value not seen yet does not hold, as in every other engine.
fn comparison_expr(property: &Property, (l, r): (&str, &str)) -> TokenStream {
    if l == r {
        return quote!(true);
    }
    if let Some(vs) = tuple_vars(property) {
        // Several variables: a side is `key[k]` (`None`: no value yet) or `Some("value")`;
        // a comparison with a side without a value does not hold.
        let side = |s: &str| -> TokenStream {
            match vs.iter().position(|x| *x == s) {
                Some(k) => {
                    let k = Literal::usize_unsuffixed(k);
                    quote!(key[#k])
                }
                None => {
                    let v = trac_core::names::parse_value(s)
                        .map_or_else(|| s.to_string(), |v| v.into_owned());
                    quote!(::core::option::Option::Some(#v))
                }
            }
        };
        let (l, r) = (side(l), side(r));
        return quote!(#l.is_some() && #l == #r);
    }
    let side = |s: &str| -> TokenStream {
        if property.var.as_deref() == Some(s) {
            quote!(value)
        } else {
            let v =
                trac_core::names::parse_value(s).map_or_else(|| s.to_string(), |v| v.into_owned());
            quote!(#v)
        }
    };
    let (l, r) = (side(l), side(r));
    quote!((#l == #r))
}

/// The number of `u64` words of a table's valuation.
fn words(table: &Table) -> usize {
    table.prop_count().div_ceil(64).max(1)
}

/// `[word0, word1, ..]` (`words` of them): the valuation of the table's propositions as bits.
fn bits_expr(model: &Model, property: &Property, table: &Table, words: usize) -> TokenStream {
    let out = word_exprs(model, property, table, words);
    quote!([#(#out),*])
}

/// The expressions of the words of [`bits_expr`].
fn word_exprs(model: &Model, property: &Property, table: &Table, words: usize) -> Vec<TokenStream> {
    let names: Vec<&str> = table.prop_names().collect();
    let mut out = Vec::new();
    for w in 0..words {
        let terms: Vec<TokenStream> = names
            .iter()
            .enumerate()
            .skip(64 * w)
            .take(64)
            .map(|(i, n)| {
                let e = prop_expr(model, property, n);
                let shift = (i % 64) as u32;
                if shift == 0 {
                    quote!(u64::from(#e))
                } else {
                    let s = Literal::u32_unsuffixed(shift);
                    quote!(u64::from(#e) << #s)
                }
            })
            .collect();
        if terms.is_empty() {
            out.push(quote!(0));
        } else {
            out.push(quote!(#(#terms)|*));
        }
    }
    out
}

/// The bases `p` of the parametric propositions `p(var)` of a table.
fn param_bases(table: &Table, var: &str) -> Vec<String> {
    trac_core::parametric::parametric_bases(table.prop_names(), var)
}

fn table_expr(model: &Model, table: &Table) -> TokenStream {
    let k = &model.krate;
    let p = table.parts();
    let semantics = match p.semantics {
        Semantics::Ltl3 => quote!(Ltl3),
        Semantics::Ltlf => quote!(Ltlf),
    };
    let minimized = p.minimized;
    let formula = &p.formula;
    let props = Literal::u32_unsuffixed(p.props);
    let strings = &p.strings;
    let string_ends = u32s(&p.string_ends);
    let initial = Literal::u32_unsuffixed(p.initial);
    let roots = u32s(&p.roots);
    let nodes = u32s(&p.nodes);
    let aux_initial = Literal::u32_unsuffixed(p.aux_initial);
    let aux_roots = u32s(&p.aux_roots);
    let aux_nodes = u32s(&p.aux_nodes);
    let aux_info = u32s(&p.aux_info);
    quote! {
        #k::generated::StaticTable::from_parts_unchecked(#k::table::TableParts {
            semantics: #k::generated::Semantics::#semantics,
            minimized: #minimized,
            formula: #formula,
            props: #props,
            strings: #strings,
            string_ends: #string_ends,
            initial: #initial,
            roots: #roots,
            nodes: #nodes,
            aux_initial: #aux_initial,
            aux_roots: #aux_roots,
            aux_nodes: #aux_nodes,
            aux_info: #aux_info,
        })
    }
}

/// The largest fused step emitted for one property and policy, in entries (8 bytes each): a
/// property with a larger one steps through `TableMonitor::step_bits` (the runtime builds the
/// same fused step at its first step), so the generated code stays small.
const FUSED_MAX_ENTRIES: usize = 1 << 13;

/// The fused steps of a non-parametric property under both policies `with_reset` may choose
/// (`reset` true, then false), if the table has them and they are small enough.
fn fused_pair(p: &Property) -> Option<[FusedPacked; 2]> {
    let t = p.table.as_ref()?;
    if p.var.is_some() {
        return None;
    }
    let policy = |reset: bool| ResetPolicy {
        on_violation: reset,
        on_satisfaction: reset && p.reset_on_satisfaction,
    };
    let pair = [
        t.fused_packed(policy(true))?,
        t.fused_packed(policy(false))?,
    ];
    (pair[0].steps.len() <= FUSED_MAX_ENTRIES).then_some(pair)
}

/// `static NAME: [u64; N] = [..];`
fn u64_static(name: &syn::Ident, v: &[u64]) -> TokenStream {
    let n = Literal::usize_unsuffixed(v.len());
    let lits = v.iter().map(|&x| Literal::u64_unsuffixed(x));
    quote!(static #name: [u64; #n] = [#(#lits),*];)
}

/// The names and flags that the parts of a model's code share.
struct Cx<'m> {
    model: &'m Model,
    /// Emit the same items with bodies that are never run (the model has errors).
    stub: bool,
    /// The path of the runtime crate.
    k: &'m syn::Path,
    vis: &'m syn::Visibility,
    /// The monitor type.
    ident: &'m syn::Ident,
    /// The monitor type's name.
    name: String,
    /// The valuation type.
    val: syn::Ident,
    /// The verdicts type.
    verdicts: syn::Ident,
    /// Whether a proposition is parametric (the valuation then has a lifetime).
    has_params: bool,
    lt_def: TokenStream,
    lt_use: TokenStream,
    lt_any: TokenStream,
    /// The runtime crate's path as text (`trac_core`), for docs.
    krate_name: String,
    /// The number of properties.
    n_lit: Literal,
    /// The body of a stub item.
    unreachable: TokenStream,
    /// Per property: its slot among the fused steps and those steps (see [`fused_pair`]).
    fused: Vec<Option<(usize, [FusedPacked; 2])>>,
    /// The number of fused properties.
    n_fused: usize,
}

impl<'m> Cx<'m> {
    fn new(model: &'m Model) -> Cx<'m> {
        let stub = model.properties.iter().any(|p| p.table.is_none());
        let k = &model.krate;
        let vis = &model.vis;
        let ident = &model.ident;
        let name = ident.to_string();
        let val = format_ident!("{}Valuation", ident);
        let verdicts = format_ident!("{}Verdicts", ident);
        let has_params = model.has_params();
        let (lt_def, lt_use, lt_any) = if has_params {
            (quote!(<'a>), quote!(<'a>), quote!(<'_>))
        } else {
            (quote!(), quote!(), quote!())
        };
        let krate_name = quote!(#k)
            .to_string()
            .replace(" ", "")
            .trim_start_matches("::")
            .to_string();
        let n = model.properties.len();
        let n_lit = Literal::usize_unsuffixed(n);
        let unreachable = quote!(::core::unreachable!("trac_monitor! input has errors"));
        let mut n_fused = 0;
        let fused = model
            .properties
            .iter()
            .map(|p| {
                let pair = fused_pair(p).filter(|_| !stub)?;
                n_fused += 1;
                Some((n_fused - 1, pair))
            })
            .collect();
        Cx {
            model,
            stub,
            k,
            vis,
            ident,
            name,
            val,
            verdicts,
            has_params,
            lt_def,
            lt_use,
            lt_any,
            krate_name,
            n_lit,
            unreachable,
            fused,
            n_fused,
        }
    }
}

/// The code of a model; `stub`: the same items with bodies that are never run (after errors).
pub fn emit(model: &Model) -> TokenStream {
    let cx = Cx::new(model);
    let valuation = valuation(&cx);
    let verdicts_def = verdicts_def(&cx);
    let monitor = monitor(&cx);
    let include = match &model.include {
        Some(path) => quote!(
            const _: &[u8] = ::core::include_bytes!(#path);
        ),
        None => quote!(),
    };

    quote! {
        #monitor
        #valuation
        #verdicts_def
        #include
    }
}

/// The valuation: one field per proposition, and `from_labels`.
fn valuation(cx: &Cx<'_>) -> TokenStream {
    let k = cx.k;
    let model = cx.model;
    let vis = cx.vis;
    let name = &cx.name;
    let val = &cx.val;
    let has_params = cx.has_params;
    let lt_def = &cx.lt_def;
    let lt_use = &cx.lt_use;
    let val_fields = model.props.iter().map(|p| {
        let f = &p.field;
        let d = docs(&p.doc.lines().map(str::to_string).collect::<Vec<_>>());
        match &p.param {
            None => quote!(#d pub #f: bool,),
            Some(param) => {
                let extra = docs(&[
                    String::new(),
                    format!(
                        "Parametric (`{}({param})`): the values for which it holds.",
                        p.name
                    ),
                ]);
                quote!(#d #extra pub #f: #k::generated::Values<'a>,)
            }
        }
    });
    let from_labels_fields = model.props.iter().map(|p| {
        let f = &p.field;
        let label = &p.name;
        match &p.param {
            None => quote!(#f: labels.contains(#label),),
            Some(_) => quote!(#f: #k::generated::Values::from_labels(labels, #label),),
        }
    });
    let labels_ref = if has_params {
        quote!(&'a #k::LabelSet)
    } else {
        quote!(&#k::LabelSet)
    };
    let derives = if has_params {
        quote!(#[derive(Clone, Copy, Debug, Default)])
    } else {
        quote!(#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)])
    };
    let val_doc = format!(
        " One step of [`{name}`]: which propositions hold (build it by hand, or with [`{val}::from_labels`])."
    );
    let valuation = quote! {
        #[doc = #val_doc]
        #derives
        #vis struct #val #lt_def {
            #(#val_fields)*
        }

        impl #lt_def #val #lt_use {
            /// The valuation of a label set: a proposition `p` holds iff the label `p` is in
            /// `labels`; a parametric `p` holds for `v` iff the label `p(v)` is.
            pub fn from_labels(labels: #labels_ref) -> Self {
                Self { #(#from_labels_fields)* }
            }
        }
    };
    valuation
}

/// The verdicts of one step: one field per property.
fn verdicts_def(cx: &Cx<'_>) -> TokenStream {
    let k = cx.k;
    let model = cx.model;
    let vis = cx.vis;
    let name = &cx.name;
    let verdicts = &cx.verdicts;
    let n_lit = &cx.n_lit;
    let verdict_fields = model.properties.iter().map(|p| {
        let f = &p.field;
        let d = format!(
            " `{}`: the verdict reached at this step, if any{}.",
            p.id,
            if p.var.is_some() {
                " (⊥ if an instance was violated, else ⊤ if the property became satisfied for every value, seen or not)"
            } else {
                ""
            }
        );
        quote!(#[doc = #d] pub #f: ::core::option::Option<#k::Verdict>,)
    });
    let field_idents: Vec<_> = model.properties.iter().map(|p| &p.field).collect();
    let verdicts_doc =
        format!(" The verdicts reached at one step by the properties of [`{name}`].");
    let to_array_doc = format!(" The verdicts in property order (as [`{name}::PROPERTIES`]).");
    let verdicts_def = quote! {
        #[doc = #verdicts_doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #vis struct #verdicts {
            #(#verdict_fields)*
        }

        impl #verdicts {
            #[doc = #to_array_doc]
            pub fn to_array(&self) -> [::core::option::Option<#k::Verdict>; #n_lit] {
                [#(self.#field_idents),*]
            }

            /// Whether a property was violated at this step.
            pub fn any_violated(&self) -> bool {
                self.to_array().contains(&::core::option::Option::Some(#k::Verdict::Violated))
            }
        }
    };
    verdicts_def
}

/// The method bodies of the monitor that read or reset every property (a stub's are
/// `unreachable!`).
struct Bodies {
    step_labels: TokenStream,
    initial: TokenStream,
    verdicts: TokenStream,
    ltlf: TokenStream,
    residuals: TokenStream,
    reset: TokenStream,
    events: TokenStream,
}

/// The monitor: the struct, its constants, constructors, step methods and accessors.
fn monitor(cx: &Cx<'_>) -> TokenStream {
    let k = cx.k;
    let model = cx.model;
    let vis = cx.vis;
    let ident = cx.ident;
    let name = &cx.name;
    let val = &cx.val;
    let verdicts = &cx.verdicts;
    let lt_any = &cx.lt_any;
    let n_lit = &cx.n_lit;
    let ids = model.properties.iter().map(|p| &p.id);
    let formulas = model.properties.iter().map(|p| &p.formula);
    let prop_names = model.props.iter().map(|p| match &p.param {
        Some(param) => format!("{}({param})", p.name),
        None => p.name.clone(),
    });
    let m_props = model.props.len();
    let m_lit = Literal::usize_unsuffixed(m_props);
    let monitor_fields = model.properties.iter().map(|p| {
        let f = &p.field;
        let d = format!(" The monitor of `{}`.", p.id);
        if p.var.is_some() {
            let ty = param_type(k, p);
            quote!(#[doc = #d] #f: #ty,)
        } else {
            quote!(#[doc = #d] #f: #k::generated::StaticTableMonitor,)
        }
    });
    let struct_doc = struct_doc(cx);
    let attrs = &model.attrs;
    let (tables_body, specials_body) = table_bodies(cx);
    let ctor_body = ctor_body(cx);
    let step_body = step_body(cx);
    let Bodies {
        step_labels: step_labels_body,
        initial: initial_body,
        verdicts: verdicts_body,
        ltlf: ltlf_body,
        residuals: residuals_body,
        reset: reset_body,
        events: events_body,
    } = bodies(cx);
    let accessors = accessors(cx);
    let monitor_impl = monitor_impl(cx);
    let Fused {
        fields: fused_fields,
        items: fused_items,
    } = fused(cx);

    let tables_doc =
        format!(" The compiled tables, in property order (as [`{name}::PROPERTIES`]); `static`.");
    let monitor = quote! {
        #(#attrs)*
        #struct_doc
        #[derive(Clone, Debug)]
        #vis struct #ident {
            #(#monitor_fields)*
            /// The verdicts reached at the last step.
            last: #verdicts,
            #fused_fields
        }

        impl #ident {
            /// The property ids, in declaration order.
            pub const PROPERTIES: [&'static str; #n_lit] = [#(#ids),*];
            /// The properties' formulas as written, in property order.
            pub const FORMULAS: [&'static str; #n_lit] = [#(#formulas),*];
            /// The propositions (`name(param)` for a parametric one), in declaration order.
            pub const PROPOSITIONS: [&'static str; #m_lit] = [#(#prop_names),*];

            #[doc = #tables_doc]
            pub fn tables() -> [&'static #k::generated::StaticTable; #n_lit] {
                #tables_body
            }

            /// For each property, in property order: the tables of its instances for the values
            /// written in its formula (`(value, table)`; see
            /// `trac_core::generated::ParamTableMonitor::with_specials`), `static`.
            pub fn special_tables() -> [&'static [(&'static str, &'static #k::generated::StaticTable)]; #n_lit] {
                #specials_body
            }

            /// A monitor in TRAC_R mode: each property restarts after a violation (and after a
            /// satisfaction if it is declared `reset_on_satisfaction`).
            pub fn new() -> Self {
                Self::with_reset(true)
            }

            /// A monitor in TRAC_R mode if `reset`, else in plain TRAC mode (a violated property
            /// stays violated).
            pub fn with_reset(reset: bool) -> Self {
                #ctor_body
            }

            /// The verdicts decided before the first step.
            pub fn initial(&self) -> #verdicts {
                #initial_body
            }

            /// Reads one step; returns the verdict each property reached at this step. No
            /// allocation (except when a parametric property meets a new value); records no
            /// witness.
            pub fn step(&mut self, v: &#val #lt_any) -> #verdicts {
                #step_body
            }

            /// Reads one step given as labels, through each property's `Monitor::step` (so
            /// witnesses are recorded).
            pub fn step_labels(&mut self, input: &#k::StepInput<'_>) -> #verdicts {
                #step_labels_body
            }

            /// The current verdict of each property, in property order.
            pub fn verdicts(&self) -> [#k::Verdict; #n_lit] {
                #verdicts_body
            }

            /// The residual formula of each property's current state (for a parametric
            /// property: of the template instance, the formula with its variable), in property
            /// order.
            pub fn residuals(&self) -> [&'static str; #n_lit] {
                #residuals_body
            }

            /// The finite-trace (LTLf) verdict of each property on the trace read so far.
            pub fn ltlf(&self) -> [#k::Verdict; #n_lit] {
                #ltlf_body
            }

            /// Back to the state before the first step.
            pub fn reset(&mut self) {
                #reset_body
            }

            /// The verdicts reached at the last step read.
            pub fn last_verdicts(&self) -> #verdicts {
                self.last
            }

            /// Calls `f(property id, value, verdict)` for every verdict reached at the last step
            /// read, in property order (`value`: the parameter value of a parametric property's
            /// instance, in instance order).
            pub fn for_each_event(&self, mut f: impl FnMut(&'static str, ::core::option::Option<&str>, #k::Verdict)) {
                #events_body
            }

            #(#accessors)*

            #fused_items
        }

        impl ::core::default::Default for #ident {
            fn default() -> Self {
                Self::new()
            }
        }

        #monitor_impl
    };
    monitor
}

/// The fused steps' part of the monitor (nothing when no property has one).
struct Fused {
    /// The struct's fields: `__fused` (one [`trac_core::generated::StaticFused`] per fused
    /// property) and `__sync` (a monitor was stepped or reset another way: positions to sync).
    fields: TokenStream,
    /// `__fused_steps(reset)` (the `static` arrays) and `__sync_fused()`.
    items: TokenStream,
}

/// The fused steps' fields and methods (see [`Fused`]).
fn fused(cx: &Cx<'_>) -> Fused {
    let k = cx.k;
    if cx.n_fused == 0 {
        return Fused {
            fields: quote!(),
            items: quote!(),
        };
    }
    let nf = Literal::usize_unsuffixed(cx.n_fused);
    let mut statics = Vec::new();
    let (mut on, mut off, mut ctor, mut sync) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (p, slot) in cx.model.properties.iter().zip(&cx.fused) {
        let (Some((slot, pair)), Some(t)) = (slot, &p.table) else {
            continue;
        };
        let up = p.field.to_string().to_uppercase();
        let (a, b) = (
            format_ident!("FUSED_{}_RESET", up),
            format_ident!("FUSED_{}_PLAIN", up),
        );
        statics.push(u64_static(&a, &pair[0].steps));
        statics.push(u64_static(&b, &pair[1].steps));
        on.push(quote!(&#a));
        off.push(quote!(&#b));
        let (props, aux_states) = (
            Literal::u32_unsuffixed(pair[0].props),
            Literal::u32_unsuffixed(pair[0].aux_states),
        );
        let (init, aux_init) = (
            Literal::u32_unsuffixed(t.initial()),
            Literal::u32_unsuffixed(t.aux_initial()),
        );
        let i = Literal::usize_unsuffixed(*slot);
        ctor.push(
            quote!(#k::generated::StaticFused::new(f[#i], #props, #aux_states, #init, #aux_init)),
        );
        let field = &p.field;
        sync.push(quote!(self.__fused[#i].sync(&self.#field);));
    }
    let fields = quote! {
        /// The fused steps of the non-parametric properties (`static`, computed at compile time).
        __fused: [#k::generated::StaticFused; #nf],
        /// A property's monitor was stepped or reset other than by `step`: sync `__fused`.
        __sync: bool,
    };
    let items = quote! {
        /// The fused steps of the properties that have one, under TRAC_R (`reset`) or TRAC.
        fn __fused_steps(reset: bool) -> [#k::generated::StaticFused; #nf] {
            #(#statics)*
            let f: [&'static [u64]; #nf] = if reset { [#(#on),*] } else { [#(#off),*] };
            [#(#ctor),*]
        }

        /// Puts the fused steps' positions in line with the properties' monitors.
        #[cold]
        fn __sync_fused(&mut self) {
            #(#sync)*
            self.__sync = false;
        }
    };
    Fused { fields, items }
}

/// Statements that mark the fused steps' positions stale (a property's monitor is stepped or
/// reset other than by the fused step).
fn mark_sync(cx: &Cx<'_>) -> TokenStream {
    if cx.n_fused == 0 {
        quote!()
    } else {
        quote!(self.__sync = true;)
    }
}

/// The monitor struct's documentation: the user's lines, then the generated summary.
fn struct_doc(cx: &Cx<'_>) -> TokenStream {
    let model = cx.model;
    let name = &cx.name;
    let val = &cx.val;
    let krate_name = &cx.krate_name;
    let mut struct_doc = model.doc.clone();
    if !struct_doc.is_empty() {
        struct_doc.push(String::new());
    }
    struct_doc.push(format!(
        "A monitor generated by `trac_monitor!`: one compiled table per property (`static`), read with [`{name}::step`] (typed valuation [`{val}`], no allocation) or [`{name}::step_labels`] (label sets, with witnesses). The accessors give each property's monitor, which implements `{krate_name}::Monitor`."
    ));
    struct_doc.push(String::new());
    struct_doc.push("Properties:".to_string());
    for p in &model.properties {
        struct_doc.push(format!(
            "- `{}`{}: `{}`",
            p.id,
            if p.var.is_some() { " (parametric)" } else { "" },
            p.formula.replace('`', "'")
        ));
    }
    docs(&struct_doc)
}

/// The bodies of `tables()` and `special_tables()`: the `static` tables.
fn table_bodies(cx: &Cx<'_>) -> (TokenStream, TokenStream) {
    let k = cx.k;
    let model = cx.model;
    let stub = cx.stub;
    let unreachable = &cx.unreachable;
    let statics: Vec<TokenStream> = model
        .properties
        .iter()
        .map(|p| {
            let s = format_ident!("TABLE_{}", p.field.to_string().to_uppercase());
            match &p.table {
                Some(t) => {
                    let e = table_expr(model, t);
                    quote!(static #s: #k::generated::StaticTable = #e;)
                }
                None => quote!(),
            }
        })
        .collect();
    let static_refs = model.properties.iter().map(|p| {
        let s = format_ident!("TABLE_{}", p.field.to_string().to_uppercase());
        quote!(&#s)
    });
    let tables_body = if stub {
        unreachable.clone()
    } else {
        quote! {
            #(#statics)*
            [#(#static_refs),*]
        }
    };
    let special_statics: Vec<TokenStream> = model
        .properties
        .iter()
        .map(|p| {
            let up = p.field.to_string().to_uppercase();
            let list = format_ident!("SPECIALS_{}", up);
            let tables: Vec<TokenStream> = p
                .specials
                .iter()
                .enumerate()
                .map(|(j, (_, t))| {
                    let s = format_ident!("TABLE_{}_{}", up, j);
                    let e = table_expr(model, t);
                    quote!(static #s: #k::generated::StaticTable = #e;)
                })
                .collect();
            let entries = p.specials.iter().enumerate().map(|(j, (c, _))| {
                let s = format_ident!("TABLE_{}_{}", up, j);
                quote!((#c, &#s))
            });
            let count = Literal::usize_unsuffixed(p.specials.len());
            if p.specials.is_empty() {
                return quote!();
            }
            quote! {
                #(#tables)*
                static #list: [(&str, &#k::generated::StaticTable); #count] = [#(#entries),*];
            }
        })
        .collect();
    let special_refs = model.properties.iter().map(|p| {
        let list = format_ident!("SPECIALS_{}", p.field.to_string().to_uppercase());
        if p.specials.is_empty() {
            quote!(&[])
        } else {
            quote!(&#list)
        }
    });
    let specials_body = if stub {
        unreachable.clone()
    } else {
        quote! {
            #(#special_statics)*
            [#(#special_refs),*]
        }
    };
    (tables_body, specials_body)
}

/// The body of `with_reset`: one monitor per property, over its tables.
fn ctor_body(cx: &Cx<'_>) -> TokenStream {
    let k = cx.k;
    let verdicts = &cx.verdicts;
    let model = cx.model;
    let stub = cx.stub;
    let unreachable = &cx.unreachable;
    let any_specials = model.properties.iter().any(|p| !p.specials.is_empty());
    let ctor_fields = model.properties.iter().enumerate().map(|(i, p)| {
        let f = &p.field;
        let i = Literal::usize_unsuffixed(i);
        let on_sat = if p.reset_on_satisfaction {
            quote!(reset)
        } else {
            quote!(false)
        };
        let policy = quote!(#k::ResetPolicy { on_violation: reset, on_satisfaction: #on_sat });
        match &p.var {
            None => quote!(#f: #k::generated::static_monitor(t[#i], #policy),),
            Some(_) if tuple_vars(p).is_some() => {
                let vs = tuple_vars(p).unwrap_or_default();
                quote! {
                    #f: #k::generated::ParamTupleMonitor::new(
                        ::std::sync::Arc::new(t[#i].clone()),
                        &[#(#vs),*],
                        #policy,
                    ),
                }
            }
            Some(var) if p.specials.is_empty() => quote! {
                #f: #k::generated::ParamTableMonitor::new(
                    ::std::sync::Arc::new(t[#i].clone()),
                    #var,
                    #policy,
                ),
            },
            Some(var) => quote! {
                #f: #k::generated::ParamTableMonitor::with_specials(
                    ::std::sync::Arc::new(t[#i].clone()),
                    #var,
                    #policy,
                    s[#i]
                        .iter()
                        .map(|&(c, table)| (::std::string::String::from(c), ::std::sync::Arc::new(table.clone())))
                        .collect(),
                ),
            },
        }
    });
    let fused_init = if cx.n_fused == 0 {
        quote!()
    } else {
        quote!(, __fused: Self::__fused_steps(reset), __sync: false)
    };
    let specials_let = if any_specials {
        quote!(let s = Self::special_tables();)
    } else {
        quote!()
    };
    if stub {
        unreachable.clone()
    } else {
        quote! {
            let t = Self::tables();
            #specials_let
            Self { #(#ctor_fields)* last: #verdicts::default() #fused_init }
        }
    }
}

/// The body of `step` (typed valuation). `value` is unused in the bits of a non-parametric
/// property: no closure there.
fn step_body(cx: &Cx<'_>) -> TokenStream {
    let model = cx.model;
    let stub = cx.stub;
    let verdicts = &cx.verdicts;
    let unreachable = &cx.unreachable;
    let step_fields = model.properties.iter().enumerate().map(|(i, p)| {
        let f = &p.field;
        let Some(table) = &p.table else {
            return quote!();
        };
        let w = words(table);
        let bits = bits_expr(model, p, table, w);
        if let Some((slot, _)) = &cx.fused[i] {
            // One word: a fused table has at most `DENSE_PROPS` propositions.
            let word = &word_exprs(model, p, table, 1)[0];
            let slot = Literal::usize_unsuffixed(*slot);
            return quote!(#f: self.__fused[#slot].step(#word, &mut self.#f),);
        }
        match &p.var {
            None => quote!(#f: self.#f.step_bits(&#bits),),
            Some(_) if tuple_vars(p).is_some() => {
                let vs = tuple_vars(p).unwrap_or_default();
                let arms = vs.iter().enumerate().map(|(k, var)| {
                    let each = param_bases(table, var).into_iter().filter_map(|b| {
                        let field = &model.props.iter().find(|p| p.name == b)?.field;
                        Some(quote!(v.#field.for_each(&mut *each);))
                    });
                    let k = Literal::usize_unsuffixed(k);
                    quote!(#k => { #(#each)* })
                });
                quote! {
                    #f: self.#f.step_with(
                        |k: usize, each: &mut dyn FnMut(&str)| match k { #(#arms)* _ => {} },
                        |key: &[::core::option::Option<&str>]| #bits,
                    ),
                }
            }
            Some(var) => {
                let bases = param_bases(table, var);
                let each = bases.iter().map(|b| {
                    let field = model.props.iter().find(|p| &p.name == b).map(|p| &p.field);
                    match field {
                        Some(field) => quote!(v.#field.for_each(&mut *each);),
                        None => quote!(),
                    }
                });
                let w_lit = Literal::usize_unsuffixed(w);
                let special_bits = if p.specials.is_empty() {
                    quote!(|_: usize| [0; #w_lit])
                } else {
                    let arms = p.specials.iter().enumerate().map(|(k, (_, t))| {
                        let k = Literal::usize_unsuffixed(k);
                        let b = bits_expr(model, p, t, w);
                        quote!(#k => #b,)
                    });
                    quote!(|k: usize| match k { #(#arms)* _ => [0; #w_lit] })
                };
                quote! {
                    #f: self.#f.step_with(
                        |each: &mut dyn FnMut(&str)| { #(#each)* },
                        |value: &str| #bits,
                        #special_bits,
                    ),
                }
            }
        }
    });
    if stub {
        unreachable.clone()
    } else {
        let sync = if cx.n_fused == 0 {
            quote!()
        } else {
            quote! {
                if self.__sync {
                    self.__sync_fused();
                }
            }
        };
        quote! {
            #sync
            self.last = #verdicts { #(#step_fields)* };
            self.last
        }
    }
}

/// The bodies of the methods that read or reset every property (see [`Bodies`]).
fn bodies(cx: &Cx<'_>) -> Bodies {
    let k = cx.k;
    let model = cx.model;
    let stub = cx.stub;
    let verdicts = &cx.verdicts;
    let unreachable = &cx.unreachable;

    let per = |f: &dyn Fn(&syn::Ident, bool) -> TokenStream| -> Vec<TokenStream> {
        model
            .properties
            .iter()
            .map(|p| f(&p.field, p.var.is_some()))
            .collect()
    };
    let step_labels_fields = per(&|f, param| {
        if param {
            quote!(#f: { self.#f.step(input); self.#f.reached() },)
        } else {
            quote!(#f: #k::Monitor::step(&mut self.#f, input),)
        }
    });
    let initial_fields = per(&|f, param| {
        if param {
            quote!(#f: self.#f.initial(),)
        } else {
            quote!(#f: #k::Monitor::initial(&self.#f),)
        }
    });
    let verdict_elems = per(&|f, param| {
        if param {
            quote!(self.#f.verdict())
        } else {
            quote!(#k::Monitor::verdict(&self.#f))
        }
    });
    let ltlf_elems = per(&|f, param| {
        if param {
            quote!(self.#f.ltlf())
        } else {
            quote!(#k::Monitor::ltlf(&self.#f))
        }
    });
    let residual_elems: Vec<TokenStream> = model
        .properties
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let f = &p.field;
            let i = Literal::usize_unsuffixed(i);
            if p.var.is_some() {
                quote!(t[#i].residual(self.#f.template().state()))
            } else {
                quote!(t[#i].residual(self.#f.state()))
            }
        })
        .collect();
    let reset_stmts = per(&|f, param| {
        if param {
            quote!(self.#f.reset();)
        } else {
            quote!(#k::Monitor::reset(&mut self.#f);)
        }
    });
    let event_stmts: Vec<TokenStream> = model
        .properties
        .iter()
        .map(|p| {
            let f = &p.field;
            let id = &p.id;
            if p.var.is_some() {
                quote! {
                    for (value, verdict) in self.#f.events() {
                        f(#id, ::core::option::Option::Some(value), verdict);
                    }
                }
            } else {
                quote! {
                    if let ::core::option::Option::Some(verdict) = self.last.#f {
                        f(#id, ::core::option::Option::None, verdict);
                    }
                }
            }
        })
        .collect();
    let mark = mark_sync(cx);
    let events_body = if stub {
        unreachable.clone()
    } else {
        quote!(#(#event_stmts)*)
    };
    let (step_labels_body, initial_body, verdicts_body, ltlf_body, residuals_body, reset_body) =
        if stub {
            (
                unreachable.clone(),
                unreachable.clone(),
                unreachable.clone(),
                unreachable.clone(),
                unreachable.clone(),
                unreachable.clone(),
            )
        } else {
            (
                quote! {
                    #mark
                    self.last = #verdicts { #(#step_labels_fields)* };
                    self.last
                },
                quote!(#verdicts { #(#initial_fields)* }),
                quote!([#(#verdict_elems),*]),
                quote!([#(#ltlf_elems),*]),
                quote! {
                    let t = Self::tables();
                    [#(#residual_elems),*]
                },
                quote! {
                    #mark
                    #(#reset_stmts)*
                    self.last = #verdicts::default();
                },
            )
        };
    Bodies {
        step_labels: step_labels_body,
        initial: initial_body,
        verdicts: verdicts_body,
        ltlf: ltlf_body,
        residuals: residuals_body,
        reset: reset_body,
        events: events_body,
    }
}

/// The accessors of the properties' monitors. A clashing name is an error already: no
/// accessor, so no follow-on error.
fn accessors(cx: &Cx<'_>) -> Vec<TokenStream> {
    let k = cx.k;
    let model = cx.model;
    let krate_name = &cx.krate_name;
    let mark = mark_sync(cx);
    model
        .properties
        .iter()
        .filter(|p| !crate::model::is_reserved(&p.field.to_string()))
        .map(|p| {
            let f = &p.field;
            let fm = format_ident!("{}_mut", f);
            let ty = if p.var.is_some() {
                param_type(k, p)
            } else {
                quote!(#k::generated::StaticTableMonitor)
            };
            let what = if p.var.is_some() {
                "its instances' monitors implement"
            } else {
                "it implements"
            };
            let d1 = format!(
                " The monitor of property `{}` ({what} `{krate_name}::Monitor`).",
                p.id
            );
            let d2 = format!(" The monitor of property `{}`, mutable.", p.id);
            let pdoc = docs(&p.doc);
            quote! {
                #[doc = #d1]
                #[doc = ""]
                #pdoc
                pub fn #f(&self) -> &#ty {
                    &self.#f
                }

                #[doc = #d2]
                pub fn #fm(&mut self) -> &mut #ty {
                    #mark
                    &mut self.#f
                }
            }
        })
        .collect()
}

/// A single non-parametric property: the monitor itself is a `Monitor`.
fn monitor_impl(cx: &Cx<'_>) -> TokenStream {
    let k = cx.k;
    let model = cx.model;
    let ident = cx.ident;
    let mark = mark_sync(cx);
    let monitor_impl = match model.properties.as_slice() {
        [p] if p.var.is_none() => {
            let f = &p.field;
            quote! {
                impl #k::Monitor for #ident {
                    fn initial(&self) -> ::core::option::Option<#k::Verdict> {
                        #k::Monitor::initial(&self.#f)
                    }
                    fn step(&mut self, input: &#k::StepInput<'_>) -> ::core::option::Option<#k::Verdict> {
                        #mark
                        #k::Monitor::step(&mut self.#f, input)
                    }
                    fn verdict(&self) -> #k::Verdict {
                        #k::Monitor::verdict(&self.#f)
                    }
                    fn residual(&self) -> ::std::string::String {
                        #k::Monitor::residual(&self.#f)
                    }
                    fn explanation(&self) -> &[#k::Change] {
                        #k::Monitor::explanation(&self.#f)
                    }
                    fn witness(&self) -> &[#k::Change] {
                        #k::Monitor::witness(&self.#f)
                    }
                    fn ltlf(&self) -> #k::Verdict {
                        #k::Monitor::ltlf(&self.#f)
                    }
                    fn reset(&mut self) {
                        #mark
                        #k::Monitor::reset(&mut self.#f)
                    }
                }
            }
        }
        _ => quote!(),
    };
    monitor_impl
}
