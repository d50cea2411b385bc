// Drives `ucp acp` with the official ACP TypeScript SDK's client
// (@agentclientprotocol/sdk, installed by scripts/setup-acp-clients) through
// the cases a real editor meets, and prints a JSON report:
// {"passed": [...], "failed": [{"case", "detail"}], "figures": {...}}.
//
// The agent runs as `$UCP_BIN --store $UCP_STORE acp --base-url
// $UCP_MODEL_URL --llm m` in $UCP_CWD; the model at $UCP_MODEL_URL must
// play, in order: an `edit` of a.txt (hello -> goodbye), a `bash` call
// `cat a.txt`, an answer, then a slow stream (the turn that is cancelled).
// With `--bench N` it only times turns against a model that streams
// (`scripts/bench-acp` starts one), each cancelled at its first update:
// N turns 200 ms apart give the median time from session/prompt to the
// first session/update and from session/cancel to the turn's answer; N
// more back to back give the first update of a prompt sent right after a
// cancel.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
// The SDK, where scripts/setup-acp-clients put it.
const acp = await import(pathToFileURL(`${env("UCP_ACP_CLIENTS")}/node_modules/@agentclientprotocol/sdk/dist/v1/stable/acp.js`));
const cwd = env("UCP_CWD");
const bench = process.argv[2] === "--bench" ? Number(process.argv[3] ?? 20) : 0;

const child = spawn(
  env("UCP_BIN"),
  ["--store", env("UCP_STORE"), "acp", "--base-url", env("UCP_MODEL_URL"), "--llm", "m", ...(bench ? ["--tools", "read"] : [])],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const exited = new Promise((resolve) => child.on("exit", (code) => resolve(code)));
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));

const report = { passed: [], failed: [], figures: {} };
const shown = (detail) => {
  try {
    return JSON.stringify(detail)?.slice(0, 2000);
  } catch {
    return String(detail?.message ?? detail);
  }
};
const check = (name, ok, detail) => {
  if (ok) report.passed.push(name);
  else report.failed.push({ case: name, detail: shown(detail) });
};

const updates = [];
const permissions = [];
let waiting = null;
const now = () => performance.now();
const app = acp
  .client()
  .onNotification("session/update", ({ params }) => {
    updates.push({ at: now(), ...params });
    if (waiting && waiting.test(params.update)) {
      waiting.resolve(now());
      waiting = null;
    }
  })
  .onRequest("session/request_permission", async ({ params }) => {
    permissions.push(params);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  });
const next = (test) => new Promise((resolve) => (waiting = { test, resolve }));
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const kinds = (kind) => updates.filter((u) => u.update.sessionUpdate === kind).map((u) => u.update);

await app.connectWith(stream, async (agent) => {
  const init = await agent.request("initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  check("initialize negotiates protocol 1", init.protocolVersion === 1, init);
  const caps = init.agentCapabilities ?? {};
  check("loadSession offered", caps.loadSession === true, caps);
  check("session list, resume, close offered", ["list", "resume", "close"].every((c) => caps.sessionCapabilities?.[c]), caps);
  check("MCP over HTTP offered", caps.mcpCapabilities?.http === true, caps);
  check("embedded context offered", caps.promptCapabilities?.embeddedContext === true, caps);
  const { sessionId } = await agent.request("session/new", { cwd, mcpServers: [] });
  check("session/new gives an id", typeof sessionId === "string" && sessionId.length > 0, sessionId);
  const prompt = (text) => agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });

  if (bench) {
    // A turn timed: prompt -> first update, cancel -> its answer.
    const timed = async (i) => {
      const started = now();
      const first = next(() => true);
      const turn = prompt(`Turn ${i}`);
      const firstAt = (await first) - started;
      const cancelled = now();
      await agent.notify("session/cancel", { sessionId });
      const answer = await turn;
      check(`bench turn ${i} cancelled`, answer.stopReason === "cancelled", answer);
      return [firstAt, now() - cancelled];
    };
    const pause = () => new Promise((resolve) => setTimeout(resolve, 200));
    const fresh = [];
    for (let i = 0; i < bench; i++) {
      await pause();
      fresh.push(await timed(i));
    }
    // Back to back: each prompt right after the last turn's cancel waits
    // for that turn to let go of its model call (its next streamed piece).
    const backToBack = [];
    for (let i = 0; i < bench; i++) backToBack.push(await timed(bench + i));
    report.figures = {
      turns: bench,
      first_update_ms_median: median(fresh.map(([first]) => first)),
      cancel_to_end_ms_median: median(fresh.map(([, cancel]) => cancel)),
      cancel_to_end_ms_max: Math.max(...fresh.map(([, cancel]) => cancel)),
      first_update_right_after_a_cancel_ms_median: median(backToBack.map(([first]) => first)),
    };
    return;
  }

  const started = now();
  const first = next(() => true);
  const answer = await prompt("Say goodbye in a.txt, then show it");
  report.figures.first_update_ms = (await first) - started;
  check("the turn ends end_turn", answer.stopReason === "end_turn", answer);
  const [edit, command] = permissions;
  check("the edit is asked for with its diff", edit?.toolCall?.content?.[0]?.type === "diff" && edit.toolCall.content[0].oldText === "hello world\n" && edit.toolCall.content[0].newText === "goodbye world\n", edit);
  check("the edit's request names the path", edit?.toolCall?.title === `Edit ${cwd}/a.txt`, edit?.toolCall);
  check("the command's request names the command line", command?.toolCall?.title === `Run \`cat a.txt\` in ${cwd}`, command?.toolCall);
  check("four options, allow and reject, once and always", edit?.options?.map((o) => o.kind).join() === "allow_once,allow_always,reject_once,reject_always", edit?.options);
  report.figures.permission_edit = edit?.toolCall?.title;
  report.figures.permission_command = command?.toolCall?.title;
  report.figures.permission_options = command?.options?.map((o) => o.name);
  const calls = kinds("tool_call");
  check("tool calls carry their kind", calls.map((c) => c.kind).join() === "edit,execute", calls);
  check("the edit's location is the file", calls[0]?.locations?.[0]?.path === `${cwd}/a.txt`, calls[0]);
  const done = kinds("tool_call_update").filter((u) => u.status === "completed");
  check("the finished edit shows its diff", done.some((u) => u.content?.some((c) => c.type === "diff")), done);
  check("the command's output is shown", done.some((u) => JSON.stringify(u.content).includes("goodbye world")), done);
  check("the answer streams as message chunks", kinds("agent_message_chunk").map((c) => c.content.text).join("") === "Done.", kinds("agent_message_chunk"));
  check("token use is reported", kinds("usage_update").length > 0, null);
  check("slash commands are announced", kinds("available_commands_update").some((u) => u.availableCommands.some((c) => c.name === "context")), null);

  const chunk = next((u) => u.sessionUpdate === "agent_message_chunk");
  const slow = prompt("Talk slowly");
  await chunk;
  const cancelled = now();
  await agent.notify("session/cancel", { sessionId });
  const stop = await slow;
  report.figures.cancel_to_end_ms = now() - cancelled;
  check("cancel ends the turn cancelled", stop.stopReason === "cancelled", stop);

  const listed = await agent.request("session/list", { cwd });
  check("session/list lists it", listed.sessions?.some((s) => s.sessionId === sessionId && s.cwd === cwd), listed);
  await agent.request("session/close", { sessionId });
  updates.length = 0;
  await agent.request("session/load", { sessionId, cwd, mcpServers: [] });
  check("session/load replays the conversation", kinds("user_message_chunk").length > 0 && kinds("tool_call").length >= 2, updates.map((u) => u.update.sessionUpdate));
  const resumed = await agent.request("session/resume", { sessionId, cwd, mcpServers: [] });
  check("session/resume takes it up", resumed !== undefined, resumed);
  try {
    await agent.request("session/teleport", {});
    check("an unknown method is refused", false, "answered");
  } catch (error) {
    check("an unknown method is refused", error.code === -32601, error);
  }
  try {
    await agent.request("session/prompt", { sessionId: "nobody", prompt: [{ type: "text", text: "hi" }] });
    check("a prompt to no session is refused", false, "answered");
  } catch (error) {
    check("a prompt to no session is refused", error.code === -32602, error);
  }
});
child.stdin.end();
const code = await exited;
check("the agent exits cleanly when the client goes", code === 0, code);
process.stdout.write(JSON.stringify(report, null, 2) + "\n");
