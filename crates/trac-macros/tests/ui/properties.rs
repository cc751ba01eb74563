// Duplicate properties, a property named like a generated method, and a spec file that does not
// exist: all reported.
trac_macros::trac_monitor! {
    struct Rules {
        props { a: "a holds" }
        first: "G a",
        first: "F a",
        step: "a",
    }
}

trac_macros::trac_monitor!(struct FromFile from "no/such/spec.ron");

fn main() {
    let _ = Rules::new().verdicts();
}
