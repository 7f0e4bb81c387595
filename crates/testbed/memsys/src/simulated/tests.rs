use super::*;

#[test]
fn extraction_rewrites_and_drops_dates_unless_asked() {
    let user = "Date: 8 May 2023\nSpeakers: Caroline, Melanie\nConversation:\nCaroline: I went to a LGBTQ support group yesterday and it was so powerful. How are you?";
    let plain = extract("Extract personal facts.", user);
    assert_eq!(
        plain["facts"],
        json!(["Caroline went to a LGBTQ support group and it was so powerful."])
    );
    let dated = extract("Extract personal facts, with their dates.", user);
    assert_eq!(
        dated["facts"],
        json!([
            "Caroline went to a LGBTQ support group yesterday (7 May 2023) and it was so powerful."
        ])
    );
}

#[test]
fn update_adds_updates_and_skips_duplicates() {
    let user = "Old memory:\n[{\"id\": \"0\", \"text\": \"Mom drinks hot cocoa every evening.\"}]\nNew facts:\n[\"Actually Mom switched to chamomile tea every evening.\", \"Dad likes jazz records.\", \"Mom drinks hot cocoa every evening.\"]";
    let out = update("You are a smart memory manager.", user);
    let events: Vec<&str> = out["memory"]
        .as_array()
        .map(|a| a.iter().filter_map(|m| m["event"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(events, vec!["UPDATE", "ADD", "ADD"]);
    assert_eq!(
        out["memory"][0]["text"],
        "Actually Mom switched to chamomile tea every evening."
    );
}

#[test]
fn delete_needs_a_retraction_and_respects_the_prompt() {
    let user = "Old memory:\n[{\"id\": \"0\", \"text\": \"Dad eats steak on Sundays.\"}]\nNew facts:\n[\"Dad no longer eats steak.\"]";
    assert_eq!(
        delete("Delete retracted memories.", user)["memory"][0]["event"],
        "DELETE"
    );
    assert_eq!(delete("Never delete anything.", user)["memory"], json!([]));
}

#[test]
fn answer_picks_the_matching_memory() {
    let user = "Answer from memories.\nQuestion: What country is Caroline's grandma from?\nMemories:\n### Memory 1:\nMemory: Caroline likes pottery.\nTime: 2023-05-08T13:56:00\n\n### Memory 2:\nMemory: Caroline's necklace is a gift from Caroline's grandma in Sweden.\nTime: 2023-05-08T13:56:00";
    assert!(answer("", user).contains("Sweden"));
    let r = SimulatedLlm.respond(&ChatRequest {
        purpose: "nope".into(),
        ..ChatRequest::default()
    });
    assert!(matches!(r, Err(ProviderError::BadResponse(_))));
}
