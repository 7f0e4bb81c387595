//! The roles panel (`L`): each op name with its role, how many ops have it and why inference
//! gave that role; a menu per name overrides it (every method uses the override, info-flow
//! verdicts recompute at once) and a reset goes back to the inferred role. Rows from
//! `crate::state::roles`. Text only: op names are never injected as HTML.

use std::collections::BTreeMap;

use memtrace::attribution::OpRole;
use memtrace::Trace;
use wasm_bindgen::JsCast;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

use super::Shared;
use crate::state::roles::basis_label;
use memtrace::session::{role_rows, RoleRow};

#[derive(Properties, PartialEq)]
pub struct Props {
    pub trace: Shared<Trace>,
    /// The user's roles for this trace: op name → role.
    pub overrides: BTreeMap<String, OpRole>,
    /// (op name, role): `None` resets to the inferred role.
    pub on_role: Callback<(String, Option<OpRole>)>,
    pub on_close: Callback<()>,
}

#[function_component(RolesPanel)]
pub fn roles_panel(props: &Props) -> Html {
    let rows = use_memo((props.trace.clone(), props.overrides.clone()), |(t, o)| {
        role_rows(&t.0, o)
    });
    let close = props.on_close.reform(|_: MouseEvent| ());
    let overridden = rows.iter().filter(|r| r.overridden).count();
    html! {
        <section id="roles" class="report-pane roles-pane" aria-label="op roles">
            <div class="report-head">
                <h2>{"Op roles"}</h2>
                <span class="muted" data-field="roles-count">
                    { format!("{} op names · {} overridden", rows.len(), overridden) }
                </span>
                <span class="spacer"></span>
                <button class="button small" onclick={close} title="close the roles panel (L)">{"close"}</button>
            </div>
            <p class="muted roles-note">
                {"Inferred from what each op reads and writes; names only break ties. A role you set is used by every method (info-flow verdicts update at once) and is saved with the project."}
            </p>
            if rows.is_empty() {
                <p class="muted">{"This trace has no operations."}</p>
            } else {
                <div class="roles-scroll">
                    <table class="roles-table">
                        <colgroup><col class="c-name" /><col class="c-count" /><col class="c-role" /><col /></colgroup>
                        <thead>
                            <tr><th scope="col">{"op name"}</th><th scope="col" class="c-count">{"ops"}</th>
                                <th scope="col">{"role"}</th><th scope="col">{"why"}</th></tr>
                        </thead>
                        <tbody>
                            { for rows.iter().map(|r| row(r, &props.on_role)) }
                        </tbody>
                    </table>
                </div>
            }
        </section>
    }
}

fn row(r: &RoleRow, on_role: &Callback<(String, Option<OpRole>)>) -> Html {
    let on_change = {
        let (on_role, name, inferred) = (on_role.clone(), r.op_name.clone(), r.inferred);
        Callback::from(move |e: Event| {
            let picked = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
                .and_then(|s| s.value().parse::<OpRole>().ok());
            if let Some(role) = picked {
                // Picking the inferred role again is a reset.
                on_role.emit((name.clone(), (role != inferred).then_some(role)));
            }
        })
    };
    let reset = {
        let (on_role, name) = (on_role.clone(), r.op_name.clone());
        Callback::from(move |_: MouseEvent| on_role.emit((name.clone(), None)))
    };
    let others: Vec<String> = r
        .other_roles
        .iter()
        .map(|(role, n)| format!("{n} × {role}"))
        .collect();
    html! {
        <tr class={classes!("role-row", r.overridden.then_some("overridden"))}
            data-op-name={r.op_name.clone()} data-role={r.role.as_str()}
            data-inferred={r.inferred.as_str()} data-overridden={r.overridden.to_string()}>
            <td><code class="role-op">{ &r.op_name }</code></td>
            <td class="role-count">{ r.count }</td>
            <td class="role-pick">
                <select class="role-select" aria-label={format!("role of {}", r.op_name)} onchange={on_change}
                        title={r.role.meaning()}>
                    { for OpRole::ALL.iter().map(|role| html! {
                        <option value={role.as_str()} selected={r.role == *role}>{ role.as_str() }</option>
                    }) }
                </select>
                if r.overridden {
                    <span class="badge role-yours">{"yours"}</span>
                    <button class="button small role-reset" onclick={reset}
                            aria-label={format!("reset the role of {} to {}", r.op_name, r.inferred)}
                        title={format!("back to the inferred role: {}", r.inferred)}>{"reset"}</button>
                }
            </td>
            <td class="role-why">
                <span class="role-basis">{ basis_label(r.basis) }</span>{": "}{ &r.reason }
                if !others.is_empty() {
                    <span class="muted">{ format!(" (also {})", others.join(", ")) }</span>
                }
            </td>
        </tr>
    }
}
