// A formula that does not parse: the error is at the string literal, with the byte offset and a
// caret; the types are still generated, so using them gives no further error.
trac_macros::trac_monitor! {
    struct Rules {
        props { a: "a holds", b: "b holds" }
        ok: "G(a -> X b)",
        broken: "G (a & )",
    }
}

fn main() {
    let mut m = Rules::new();
    let v = m.step(&RulesValuation { a: true, b: false });
    let _ = (v.ok, v.broken, m.residuals());
}
