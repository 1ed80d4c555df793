//! `--listen otlp:0.0.0.0:PORT` takes spans from the whole network: the TUI says so in its
//! header and on the status line, which `:messages` keeps (issue 28).

use doxascope::trace::live::{ListenAddr, Live, LiveConfig};
use doxascope::tui::app::App;
use doxascope::tui::data::Store;
use doxascope::tui::highlight;
use doxascope::tui::sources::announce_listening;
use doxascope::tui::theme::Theme;
use doxascope::tui::ui::render_text;

fn app() -> App {
    highlight::load_now();
    let mut app = App::new(Store::new(), Theme::builtin("light").expect("theme"));
    app.store = Store::from_bytes("file.jsonl", b"{\"kind\":\"announce\",\"formula\":\"a\"}\n");
    app
}

/// The header and the `:messages` history once listening on `addr`.
fn shown(addr: &str) -> (String, Vec<String>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (live, _rx) = Live::new(LiveConfig::default());
        let addr: ListenAddr = addr.parse().expect("addr");
        let l = live.listen(&addr).await.expect("listen");
        let mut app = app();
        announce_listening(&mut app, l.local_addr());
        let screen = render_text(&mut app, 200, 30);
        (screen, app.messages.iter().cloned().collect())
    })
}

#[test]
fn listening_on_all_interfaces_is_said_in_the_header_and_the_messages() {
    let (screen, messages) = shown("otlp:0.0.0.0:0");
    assert!(screen.contains("listening otlp:0.0.0.0:"), "{screen}");
    assert!(screen.contains("reachable from the network!"), "{screen}");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("reachable from the network") && m.contains("0.0.0.0")),
        "{messages:?}"
    );
    // Loopback says nothing of the kind.
    let (screen, messages) = shown("otlp:127.0.0.1:0");
    assert!(screen.contains("listening otlp:127.0.0.1:"), "{screen}");
    assert!(!screen.contains("reachable"), "{screen}");
    assert!(
        messages.iter().all(|m| !m.contains("reachable")),
        "{messages:?}"
    );
}
