//! The agent sandbox, for real: a program run inside it finds the denied
//! paths empty, reaches only the allowed host (through the forwarders)
//! and no other, runs under its memory, process and seccomp limits, and
//! is stopped at its time limit.

use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use ucpkit_tools::confine::{AgentSandbox, Endpoint, Inside};

/// A shell script run inside `sandbox`, its output written to `out`.
fn run_inside(sandbox: &AgentSandbox, script: &str, out: &Path) -> i32 {
    let mut command = Command::new("bash");
    command.arg("-c").arg(format!("exec > {} 2>&1\n{script}", out.display()));
    sandbox.run(command).expect("the sandbox starts")
}

/// Whether the agent sandbox can be made on this machine (else the test
/// says it is skipped, and why).
fn can_sandbox() -> bool {
    match AgentSandbox::available() {
        Ok(()) => true,
        Err(why) => {
            eprintln!("skipped: the agent sandbox cannot be made here: {why}");
            false
        }
    }
}

fn sandbox_for(home: &Path, workspace: &Path) -> AgentSandbox {
    AgentSandbox {
        workspace: workspace.to_owned(),
        deny_read: AgentSandbox::default_denied(Some(home), workspace),
        hosts: Vec::new(),
        memory_bytes: Some(2 << 30),
        max_processes: 256,
        time_limit: None,
    }
}

#[test]
fn secrets_are_covered_and_the_network_is_gone() {
    if !can_sandbox() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (home, workspace) = (dir.path().join("home"), dir.path().join("work"));
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::create_dir_all(&workspace).unwrap();
    std::fs::write(home.join(".ssh/id_test"), "SECRET-KEY").unwrap();
    std::fs::write(home.join(".aws/credentials"), "SECRET-AWS").unwrap();
    std::fs::write(workspace.join(".env"), "SECRET-ENV").unwrap();
    std::fs::write(workspace.join("plain.txt"), "visible").unwrap();
    // A server outside: the sandbox must not reach it.
    let outside = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = outside.local_addr().unwrap().port();
    let out = dir.path().join("out.txt");
    let script = format!(
        "cd {work}; cat {home}/.ssh/id_test; ls -A {home}/.ssh; cat {home}/.aws/credentials; cat .env; cat plain.txt\n\
         echo; (echo hi > /dev/tcp/127.0.0.1/{port}) && echo REACHED || echo NO-NETWORK\n\
         grep Seccomp: /proc/self/status\n\
         umount {home}/.ssh 2>/dev/null || umount -l {home}/.ssh 2>/dev/null; cat {home}/.ssh/id_test 2>/dev/null\n\
         cat /proc/*/root{home}/.ssh/id_test 2>/dev/null; echo processes: $(ls /proc | grep -c '^[0-9]')\n\
         echo x > {home}/.ssh/planted && echo PLANTED || echo NOT-PLANTED",
        work = workspace.display(),
        home = home.display(),
    );
    let code = run_inside(&sandbox_for(&home, &workspace), &script, &out);
    let seen = std::fs::read_to_string(&out).unwrap();
    assert_eq!(code, 0, "{seen}");
    assert!(!seen.contains("SECRET"), "a secret leaked: {seen}");
    assert!(seen.contains("visible") && seen.contains("NO-NETWORK") && seen.contains("NOT-PLANTED"), "{seen}");
    assert!(seen.contains("Seccomp:\t2"), "a seccomp filter is on: {seen}");
    let processes: usize =
        seen.split("processes: ").nth(1).and_then(|t| t.split_whitespace().next()?.parse().ok()).unwrap();
    assert!(processes < 10, "only the sandbox's processes are in its /proc: {seen}");
    assert_eq!(std::fs::read_to_string(home.join(".ssh/id_test")).unwrap(), "SECRET-KEY", "outside, nothing changed");
}

#[test]
fn only_the_allowed_host_is_reached_through_the_forwarders() {
    if !can_sandbox() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("work");
    std::fs::create_dir_all(&workspace).unwrap();
    let allowed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = allowed.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut stream in allowed.incoming().flatten() {
            let mut line = [0u8; 5];
            let _ = stream.read_exact(&mut line);
            let _ = stream.write_all(b"pong from outside\n");
        }
    });
    let other = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut sandbox = sandbox_for(dir.path(), &workspace);
    sandbox.hosts = vec![Endpoint { host: "127.0.0.1".into(), port }, Endpoint { host: "localhost".into(), port }];
    // The forwarders inside are the child's to start: this test program
    // again, running only `probe`, does so and talks to the hosts.
    let out = dir.path().join("out.txt");
    let mut command = Command::new(std::env::current_exe().unwrap());
    command.args(["--exact", "probe", "--nocapture", "--test-threads=1"]);
    command.env(PROBE, format!("{} {port} {other}", out.display()));
    let code = sandbox.run(command).unwrap();
    let seen = std::fs::read_to_string(&out).unwrap_or_default();
    assert_eq!(code, 0, "{seen}");
    assert!(seen.contains("by address: pong from outside"), "{seen}");
    assert!(seen.contains("by name: pong from outside"), "the name resolves inside: {seen}");
    assert!(seen.contains("other port: refused"), "{seen}");
    assert!(Inside::current().unwrap().is_none(), "the test itself runs outside");
}

/// Set for `probe`: where to write, the allowed port, another port.
const PROBE: &str = "UCP_TEST_SANDBOX_PROBE";

/// Inside the sandbox (started by the test above): starts the forwarders
/// and reports what it reaches. Does nothing when run on its own.
#[test]
fn probe() {
    let Ok(spec) = std::env::var(PROBE) else { return };
    let parts: Vec<&str> = spec.split(' ').collect();
    let (out, port, other) = (parts[0], parts[1].parse::<u16>().unwrap(), parts[2].parse::<u16>().unwrap());
    Inside::current().unwrap().expect("run inside").start_forwarders().unwrap();
    let ask = |host: &str, port: u16| -> String {
        match std::net::TcpStream::connect((host, port)) {
            Ok(mut stream) => {
                stream.write_all(b"ping\n").unwrap();
                let mut reply = String::new();
                let _ = stream.read_to_string(&mut reply);
                if reply.is_empty() {
                    "refused".into()
                } else {
                    reply.trim().to_owned()
                }
            }
            Err(_) => "refused".into(),
        }
    };
    let report = format!(
        "by address: {}\nby name: {}\nother port: {}\n",
        ask("127.0.0.1", port),
        ask("localhost", port),
        ask("127.0.0.1", other)
    );
    std::fs::write(out, report).unwrap();
}

#[test]
fn memory_processes_and_time_are_limited() {
    if !can_sandbox() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("work");
    std::fs::create_dir_all(&workspace).unwrap();
    let out = dir.path().join("out.txt");
    let mut sandbox = sandbox_for(dir.path(), &workspace);
    sandbox.memory_bytes = Some(512 << 20);
    sandbox.max_processes = 64;
    if !ucpkit_tools::confine::process_limit_holds() {
        eprintln!("skipped: root without a pids cgroup is held to no process limit; the fork bomb is not run");
        return;
    }
    // A fork bomb, held by the process limit (and ended by `timeout`).
    let script = "python3 -c 'bytearray(1 << 30)' 2>&1 | tail -1\n\
                  timeout 5 bash -c 'bomb() { bomb | bomb & }; bomb' 2>/dev/null; echo bomb-ended\n\
                  ulimit -u";
    let code = run_inside(&sandbox, script, &out);
    let seen = std::fs::read_to_string(&out).unwrap();
    assert_eq!(code, 0, "{seen}");
    assert!(seen.contains("MemoryError"), "{seen}");
    assert!(seen.contains("bomb-ended") && seen.trim_end().ends_with("64"), "{seen}");
    // The time limit kills what runs past it.
    sandbox.time_limit = Some(Duration::from_secs(1));
    let started = std::time::Instant::now();
    let code = run_inside(&sandbox, "sleep 30", &out);
    assert_eq!(code, 128 + 9, "killed");
    assert!(started.elapsed() < Duration::from_secs(20));
}
