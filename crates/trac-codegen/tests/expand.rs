//! Expansion snapshots (insta) of the code generator on small inputs: what `trac_monitor!`
//! emits, formatted with prettyplease. Review a change with `INSTA_UPDATE=always cargo test -p
//! trac-codegen` and `git diff`, or `cargo insta review`.

use quote::quote;

fn pretty(tokens: proc_macro2::TokenStream) -> String {
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a file");
    prettyplease::unparse(&file)
}

#[test]
fn inline_monitor() {
    let out = trac_codegen::expand(quote! {
        /// Delivery rules.
        pub struct Delivery {
            props { delivered_p1: "package1 is delivered", delivered_p2: "package2 is delivered" }
            /// package2 is delivered before package1.
            p2_before_p1: "!delivered_p1 W delivered_p2",
        }
    });
    insta::assert_snapshot!("inline_monitor", pretty(out));
}

#[test]
fn parametric_monitor() {
    let out = trac_codegen::expand(quote! {
        pub struct Rooms {
            props { go_to(room): "the agent goes to {room}" }
            allowed: "forall room: G(go_to(room) -> go_to(hall))",
        }
    });
    insta::assert_snapshot!("parametric_monitor", pretty(out));
}

#[test]
fn errors_keep_the_types() {
    let out = trac_codegen::expand(quote! {
        struct Broken {
            props { a: "a holds" }
            bad: "G (a & )",
            unknown: "F b",
        }
    });
    let text = pretty(out);
    assert_eq!(text.matches("compile_error!").count(), 2, "{text}");
    assert!(text.contains("struct BrokenValuation {"), "{text}");
    assert!(
        text.contains("pub fn step(&mut self, v: &BrokenValuation)"),
        "{text}"
    );
    insta::assert_snapshot!("errors_keep_the_types", text);
}

#[test]
fn several_forall_variables_expand_to_a_tuple_monitor() {
    let out = trac_codegen::expand(quote! {
        pub struct Calls {
            props { call(tool): "calls {tool}", modify(rid): "modifies {rid}" }
            pair: "forall tool, rid: G(call(tool) & modify(rid) -> X call(tool))",
        }
    });
    let text = out.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    assert!(text.contains("ParamTupleMonitor"), "{text}");
}

#[test]
fn several_forall_variables_beyond_the_tuple_monitor_are_refused_with_a_reason() {
    // A value written where a variable sits (`call(rm)` beside `call(tool)`).
    let out = trac_codegen::expand(quote! {
        pub struct Calls {
            props { call(tool): "calls {tool}", modify(rid): "modifies {rid}" }
            pair: "forall tool, rid: G(call(tool) & modify(rid) -> !call(rm))",
        }
    });
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(text.contains("also writes the value `rm`"), "{text}");
    // Two variables at the same place of one proposition (`tool = rid` merges the atoms).
    let out = trac_codegen::expand(quote! {
        pub struct Calls {
            props { call(tool): "calls {tool}" }
            pair: "forall tool, rid: G(call(tool) -> X !call(rid))",
        }
    });
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(text.contains("same place"), "{text}");
}

#[test]
fn syntax_errors_are_reported() {
    let out = trac_codegen::expand(quote!(pub struct X { props { a "no colon" } }));
    let text = out.to_string();
    assert!(text.contains("compile_error"), "{text}");
    let out = trac_codegen::expand(quote!(pub struct X of "spec.ron"));
    assert!(out.to_string().contains("expected `{ props"), "{out}");
}

#[test]
fn names_from_specs() {
    use trac_codegen::{camel_ident, snake_ident};
    assert_eq!(snake_ident("R1"), "r1");
    assert_eq!(snake_ident("p1A"), "p1a");
    assert_eq!(snake_ident("package 1 loaded"), "package_1_loaded");
    assert_eq!(snake_ident("1st"), "_1st");
    assert_eq!(snake_ident("type"), "type_");
    assert_eq!(camel_ident("textworld"), "Textworld");
    assert_eq!(camel_ident("my-spec_file"), "MySpecFile");
}
