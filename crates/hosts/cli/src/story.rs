//! `memtrace story FILE [--case ID] [--json] [--role NAME=ROLE …]`: each failed case's decisive
//! path as numbered steps (evidence → ops and versions → the decisive op → retrieval → answer →
//! judge), from the info-flow verdict; the answer's words in «», version diffs as [-old-]{+new+}.

use std::process::ExitCode;

use memtrace::algo::GraphIndex;
use memtrace::attribution::{InfoFlow, Roles};
use memtrace::story::{story_in, Story};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    cases: crate::attribute::Cases,
    #[command(flatten)]
    roles: crate::roles::RoleArgs,
}

pub fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (trace, cfg) = args.roles.load(&args.cases.file)?;
    let roles = Roles::infer(&trace, &cfg);
    let cases: Vec<_> = trace
        .cases
        .iter()
        .filter(|c| args.cases.case.as_ref().is_none_or(|id| *id == c.query_id))
        .collect();
    if cases.is_empty() {
        anyhow::bail!(
            "{}: no failed case{}; `memtrace info` lists them",
            args.cases.file.display(),
            args.cases
                .case
                .as_ref()
                .map(|c| format!(" {c}"))
                .unwrap_or_default()
        );
    }
    // One index for all the stories: building it is most of a story's time on a large trace.
    let g = GraphIndex::build(&trace).ok();
    for c in cases {
        let verdict = InfoFlow::default().attribute_with(&trace, &roles, c).ok();
        let s = story_in(&trace, g.as_ref(), c, verdict.as_ref(), &roles);
        if args.cases.json {
            println!("{}", serde_json::to_string(&s)?);
        } else {
            print_story(&s);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_story(s: &Story) {
    println!(
        "{}\n  Q: {}\n  gold: {}   answered: {}",
        s.case_id,
        s.question,
        s.golden_answers.join(" / "),
        s.prediction
    );
    for (i, c) in s.cards.iter().enumerate() {
        let role = c.role.map_or("evidence", |r| r.as_str());
        println!("  {:>2}. [{role}] {}  {}", i + 1, c.title, c.time);
        if let Some(d) = &c.decisive {
            println!("      ✗ {}: {}", d.error_type.as_str(), d.reason);
        }
        let body: String = match &c.diff {
            Some(diff) => diff
                .iter()
                .map(|p| match p.change {
                    "removed" => format!("[-{}-]", p.text),
                    "added" => format!("{{+{}+}}", p.text),
                    _ => p.text.clone(),
                })
                .collect(),
            None => c
                .text
                .iter()
                .map(|x| {
                    if x.mark {
                        format!("«{}»", x.text)
                    } else {
                        x.text.clone()
                    }
                })
                .collect(),
        };
        println!("      {body}");
        let groups: Vec<&str> = s
            .groups
            .iter()
            .filter(|g| g.after == i)
            .map(|g| g.label.as_str())
            .collect();
        if !groups.is_empty() {
            println!("      ({})", groups.join(", "));
        }
    }
    println!();
}
