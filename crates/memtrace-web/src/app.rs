//! The page: one reducer shared by small components.

use std::rc::Rc;

use yew::prelude::*;

use crate::components::{drop_zone::DropZone, errors::ErrorList, summary::SummaryCard};
use crate::services::files;
use crate::state::{Action, PageState};

/// Adapter so `PageState::reduce` drives `use_reducer`.
#[derive(Default, PartialEq)]
struct Store(PageState);

impl Reducible for Store {
    type Action = Action;
    fn reduce(self: Rc<Self>, action: Action) -> Rc<Self> {
        Rc::new(Store(self.0.clone().reduce(action)))
    }
}

#[function_component(App)]
pub fn app() -> Html {
    let store = use_reducer(Store::default);

    {
        let store = store.clone();
        use_effect_with((), move |()| {
            store.dispatch(Action::Load {
                name: crate::DEMO_NAME.into(),
                bytes: crate::DEMO_TRACE.into(),
            });
        });
    }

    let on_files = {
        let store = store.clone();
        Callback::from(move |list: Vec<web_sys::File>| {
            store.dispatch(Action::ClearErrors);
            let dispatch = store.dispatcher();
            files::read_all(list, move |action| dispatch.dispatch(action));
        })
    };
    let on_select = {
        let store = store.clone();
        Callback::from(move |i: usize| store.dispatch(Action::Select(i)))
    };

    let state = &store.0;
    html! {
        <DropZone on_files={on_files}>
            <header class="topbar">
                <h1>{"memtrace"}</h1>
                <span class="tagline">{"why did the memory system answer wrongly?"}</span>
            </header>
            <main>
                <ErrorList errors={state.errors.clone()} />
                <nav class="trace-tabs">
                    { for state.traces.iter().enumerate().map(|(i, t)| {
                        let on_select = on_select.clone();
                        let active = state.current == Some(i);
                        html! {
                            <button class={classes!("tab", active.then_some("active"))}
                                    onclick={Callback::from(move |_| on_select.emit(i))}>
                                { &t.name }
                            </button>
                        }
                    }) }
                </nav>
                if let Some(t) = state.current_trace() {
                    <SummaryCard name={t.name.clone()} summary={t.summary.clone()} />
                }
            </main>
        </DropZone>
    }
}
