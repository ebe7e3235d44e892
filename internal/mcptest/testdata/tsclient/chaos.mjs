// chaos.mjs drives a TypeScript SDK client for mcpvcr's chaos replay
// tests: node chaos.mjs URL SCRIPT connects over Streamable HTTP (with
// $TRANSPORT=sse, the 2024-11-05 HTTP+SSE transport; with a URL of
// stdio:["cmd","arg",…], over stdio to that command, its stderr this
// process's, its exit code the last thing seen), lists
// the tools and runs SCRIPT ("script": the first steps of the Go SDK test
// script, its slow call cancelled; "run0": run 0 of the multi-session cassettes; "everything":
// server-everything's echo, get-sum and long-running operation, twice;
// "kinds": server-everything's tools with progress and a cancellation;
// "reorder": the Go SDK chaos script of that name; "all": the Go SDK
// test server's tools that give every chaos kind a place, with roots
// declared and answered), each step's
// outcome part of what it saw, closes, and prints that as one line of
// JSON on stdout. $CLIENT_NAME names the client in initialize; with
// $SHOW_RESULTS=1 a call's step says what it answered.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, script] = process.argv.slice(2);
let transport;
if (url.startsWith("stdio:")) {
  const [command, ...args] = JSON.parse(url.slice("stdio:".length));
  transport = new StdioClientTransport({ command, args, env: process.env, stderr: "inherit" });
} else if (process.env.TRANSPORT === "sse") {
  transport = new SSEClientTransport(new URL(url));
} else {
  // Reconnect soon: the defaults wait a second before resuming a stream.
  transport = new StreamableHTTPClientTransport(new URL(url), {
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 },
  });
}
// Script "all" declares roots (tool roots asks for them); the others
// declare nothing, as their recordings did.
const client = new Client(
  { name: process.env.CLIENT_NAME || "ts-chaos-client", version: "1.0.0" },
  script === "all" ? { capabilities: { roots: {} } } : undefined,
);
if (script === "all") {
  client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///tmp/project", name: "project" }] }));
}
const out = [];
const opts = { timeout: 10000 };
async function step(name, f) {
  try {
    const res = await f();
    // $SHOW_RESULTS=1: what a call answered, not only that it did.
    out.push(name + ": " + (process.env.SHOW_RESULTS && res && res.content ? JSON.stringify(res.content) : "ok"));
  } catch (e) {
    out.push(name + ": " + e.message);
  }
}
// cancelAtFirstProgress calls tool name with args and cancels the call
// once a progress notification for it came that first accepts (within
// 5 s).
const cancelAtFirstProgress = (name, args, first = () => true) =>
  new Promise((resolve, reject) => {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort("no progress came"), 5000);
    const onprogress = (p) => {
      if (first(p)) {
        clearTimeout(timer);
        ac.abort("cancelled after its first progress");
      }
    };
    client.callTool({ name, arguments: args }, undefined, { ...opts, signal: ac.signal, onprogress }).then(resolve, (e) => (ac.signal.aborted ? resolve() : reject(e)));
  });
// slow calls tool slow and cancels it once its "started" progress came,
// as the Go SDK test script does.
const slow = () => cancelAtFirstProgress("slow", {}, (p) => p.message === "started");
const call = (name, args, meta) => () => client.callTool(meta ? { name, arguments: args, _meta: meta } : { name, arguments: args }, undefined, opts);
const steps = {
  script: [
    ["echo", call("echo", { text: "hello" })],
    ["add", call("add", { a: 2, b: 3 })],
    ["info", call("info", {})],
    ["progress", call("progress", { steps: 3 }, { progressToken: "progress-1" })],
    ["logging/setLevel", () => client.setLoggingLevel("debug", opts)],
    ["log", call("log", {}, { progressToken: "log-1" })],
    ["slow", slow],
    ["resources/list", () => client.listResources(undefined, opts)],
    ["resources/read", () => client.readResource({ uri: "test://static/hello" }, opts)],
    ["resources/read", () => client.readResource({ uri: "test://items/42" }, opts)],
    ["resources/templates/list", () => client.listResourceTemplates(undefined, opts)],
    ["prompts/list", () => client.listPrompts(undefined, opts)],
    ["prompts/get", () => client.getPrompt({ name: "greet", arguments: { name: "Ada" } }, opts)],
  ],
  run0: [["echo", call("echo", { text: "run 0" })]],
  // everything: server-everything's echo, get-sum and a short
  // long-running operation with progress, twice.
  everything: [0, 1].flatMap((i) => [
    ["echo " + i, call("echo", { message: "hi " + i })],
    ["get-sum " + i, call("get-sum", { a: i, b: 2 })],
    ["long " + i, call("trigger-long-running-operation", { duration: 0.3, steps: 3 }, { progressToken: "long-" + i })],
  ]),
  // kinds: server-everything's echo, get-sum, a long-running operation
  // with progress, one cancelled at its first progress (the server goes
  // on: a cancelled request of the recording), and an echo after it.
  kinds: [
    ["echo", call("echo", { message: "hi" })],
    ["get-sum", call("get-sum", { a: 1, b: 2 })],
    ["long", call("trigger-long-running-operation", { duration: 0.3, steps: 3 }, { progressToken: "long" })],
    ["long cancelled", () => cancelAtFirstProgress("trigger-long-running-operation", { duration: 0.6, steps: 3 })],
    ["echo after", call("echo", { message: "after" })],
  ],
  // all: the Go SDK test server (with tool pair): calls whose SSE answers
  // carry several events (progress, log), a level set, a call cancelled
  // at its first progress, two calls at once (their responses side by
  // side), a call that asks the client for its roots, and an echo after.
  all: [
    ["echo", call("echo", { text: "hello" })],
    ["progress", call("progress", { steps: 3 }, { progressToken: "progress-1" })],
    ["logging/setLevel", () => client.setLoggingLevel("debug", opts)],
    ["log", call("log", {}, { progressToken: "log-1" })],
    ["slow", slow],
    ["pair", () => Promise.all([call("pair", { n: 1 })(), call("pair", { n: 2 })()])],
    ["roots", call("roots", {})],
    ["add", call("add", { a: 2, b: 3 })],
  ],
  // reorder: tool notify of the Go SDK test server (a log message on the
  // GET stream, progress on the call's stream), then an echo.
  reorder: [
    ["logging/setLevel", () => client.setLoggingLevel("debug", opts)],
    ["notify", call("notify", {}, { progressToken: "progress-1" })],
    ["echo", call("echo", { text: "after" })],
  ],
}[script];
try {
  await client.connect(transport, opts);
  out.push("connected");
  await step("tools/list", () => client.listTools(undefined, opts));
  for (const [name, f] of steps) await step(name, f);
} catch (e) {
  out.push("connect: " + e.message);
}
// The server process, to read its exit code once close has ended it
// (the transport keeps it in a field of its own, and forgets it at close).
const server = transport._process;
await step("close", () => client.close());
if (server) out.push("server exit: " + server.exitCode);
process.stdout.write(JSON.stringify(out) + "\n");
