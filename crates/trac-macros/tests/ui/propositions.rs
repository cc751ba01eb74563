// Unknown and duplicate propositions, a parameter misused and an unquantified variable: all
// reported together.
trac_macros::trac_monitor! {
    struct Rules {
        props {
            a: "a holds",
            take(item): "the agent takes {item}",
            a: "a holds, again",
        }
        uses_unknown: "G(a -> X c)",
        no_param: "F take",
        param_on_plain: "G !a(x)",
        free_var: "G take(item)",
    }
}

fn main() {
    let mut m = Rules::new();
    m.step(&RulesValuation::default());
}
