//! `create_agent` spans (GenAI conventions: a client creating an agent, as remote-agent
//! services such as the OpenAI Assistants or Azure AI Agents do). The creation is usually a
//! trace of its own, made once before the runs that use the agent: it belongs to the session
//! of the run that invokes the agent (the same `gen_ai.agent.id`, else `gen_ai.agent.name`),
//! not to a session of its own, and it is not a model call even though it names a model.
//! It is written as a `span` event (`operation: create_agent`) naming the agent.

use super::super::span::Span;
use super::{Class, Obj, Out, SessionMap, classify, model_of};

/// How a run names the agent it invokes, and a creation the agent it creates: its id, else
/// its name.
pub(crate) fn agent_key(sp: &Span<'_>) -> Option<String> {
    sp.str_attr("gen_ai.agent.id")
        .map(|id| format!("id {id}"))
        .or_else(|| {
            sp.str_attr("gen_ai.agent.name")
                .map(|n| format!("name {n}"))
        })
}

/// The agent keys a trace's spans create, when every span of it is an agent's creation;
/// `None` for any other trace.
pub(crate) fn creations_only<'s, 'a: 's>(
    spans: impl IntoIterator<Item = &'s Span<'a>>,
) -> Option<Vec<String>> {
    let mut keys = Vec::new();
    for sp in spans {
        if classify(sp) != Class::CreateAgent {
            return None;
        }
        keys.extend(agent_key(sp));
    }
    keys.sort();
    keys.dedup();
    (!keys.is_empty()).then_some(keys)
}

/// The agent keys the runs among `spans` invoke.
pub(crate) fn invoked<'s, 'a: 's>(spans: impl IntoIterator<Item = &'s Span<'a>>) -> Vec<String> {
    spans
        .into_iter()
        .filter(|sp| classify(sp) == Class::Agent)
        .flat_map(|sp| {
            // A run naming the agent by id and by name is found by either.
            let id = sp.str_attr("gen_ai.agent.id").map(|id| format!("id {id}"));
            let name = sp
                .str_attr("gen_ai.agent.name")
                .map(|n| format!("name {n}"));
            id.into_iter().chain(name)
        })
        .collect()
}

impl SessionMap {
    /// A `create_agent` span, as a `span` event naming the agent it created.
    pub(super) fn create_agent(&mut self, sp: &Span<'_>, out: &mut Vec<Out>) {
        let mut o = Obj::new("span", &self.name);
        o.id(sp);
        o.str("name", &sp.name);
        o.str("operation", "create_agent");
        o.opt("x_agent_name", sp.str_attr("gen_ai.agent.name"));
        o.opt("x_agent_id", sp.str_attr("gen_ai.agent.id"));
        o.opt("model", model_of(sp));
        o.opt(
            "provider",
            sp.str_attr("gen_ai.provider.name")
                .or_else(|| sp.str_attr("gen_ai.system")),
        );
        if let Some(d) = sp.str_attr("gen_ai.agent.description") {
            o.text("x_description", d);
        }
        // Its own trace, when it came from one apart from the session's.
        if let (Some(t), Some(mine)) = (sp.trace, self.trace)
            && t != mine
        {
            o.hex("x_trace", t, 32);
        }
        o.duration(sp);
        o.failure(sp);
        o.span_ids(sp);
        self.emit(o, sp.start, out);
    }
}
