//! `ferrocuda --help` lists each subcommand with its own description.

mod support;

#[test]
fn help_describes_each_subcommand_on_its_own_line() {
    let help = support::stdout_of(support::ferrocuda().arg("--help"));
    let line_of = |command: &str| -> &str {
        help.lines()
            .find(|l| l.split_whitespace().next() == Some(command))
            .unwrap_or_else(|| panic!("no `{command}` line in:\n{help}"))
    };
    for (command, description) in [
        ("run", "The seed's table, measured here"),
        ("kernels", "What each kernel costs on the GPU"),
        ("doctor", "Check the NVIDIA driver"),
    ] {
        let line = line_of(command);
        assert!(
            line.contains(description),
            "`{command}` should say {description:?}:\n{help}"
        );
    }
    assert!(
        !line_of("kernels").contains("NVIDIA driver"),
        "`kernels` shows doctor's description:\n{help}"
    );
}
