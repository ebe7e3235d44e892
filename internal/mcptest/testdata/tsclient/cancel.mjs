// cancel.mjs drives a TypeScript SDK client for mcpvcr's cancellation
// tests: it connects (over stdio: node cancel.mjs stdio CMD ARGS...; over
// Streamable HTTP: node cancel.mjs http URL), lists the tools, calls
// $TOOL (default trigger-long-running-operation) with the JSON arguments
// $ARGS (default {duration 1.2, steps 6}) and progress token "cancel-1",
// aborts the call when progress $CANCEL_AT arrives (never when unset),
// waits until progress $WAIT_FOR has arrived (if set), calls echo with
// argument $ECHO_ARG (default message), and prints what it saw as one
// line of JSON on stdout. $CLIENT_NAME names the client in initialize.
// With $CANCEL_BY=close it closes the transport at progress $CANCEL_AT
// instead of aborting the call: over HTTP the one way this SDK has to
// close a response stream, and nothing is POSTed; it prints what it saw
// then.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
const cancelAt = Number(process.env.CANCEL_AT || 0);
const waitFor = Number(process.env.WAIT_FOR || 0);
const closing = process.env.CANCEL_BY === "close";
const tool = process.env.TOOL || "trigger-long-running-operation";
const args = JSON.parse(process.env.ARGS || '{"duration":1.2,"steps":6}');
const echoArg = process.env.ECHO_ARG || "message";
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const client = new Client({ name: process.env.CLIENT_NAME || "ts-client", version: "1.0.0" });
const out = { progress: [] };
const ac = new AbortController();
let arrived = () => {};
const reached = new Promise((resolve) => { arrived = resolve; });
let closed = () => {};
const gone = new Promise((resolve) => { closed = resolve; });
// Every progress notification, whether or not the SDK still tracks its
// request: what comes after the cancellation is what the test looks at.
client.setNotificationHandler(ProgressNotificationSchema, (n) => {
  if (n.params.progressToken !== "cancel-1") return;
  out.progress.push(n.params.progress);
  if (n.params.progress === cancelAt) {
    out.progress.push(closing ? "close" : "cancel");
    if (closing) {
      transport.close().then(closed);
    } else {
      ac.abort("changed my mind");
    }
  }
  if (n.params.progress === waitFor) arrived();
});
await client.connect(transport);
out.tools = (await client.listTools()).tools.length;
const call = client.callTool(
  { name: tool, arguments: args, _meta: { progressToken: "cancel-1" } },
  undefined, { signal: ac.signal, timeout: 20000 });
if (closing) {
  // Closing the transport rejects the call (connection closed).
  await gone;
  out.call = await call.then(() => "answered", (e) => "error: " + e.message);
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(0);
}
try {
  out.call = await call;
} catch (e) {
  out.call = ac.signal.aborted ? "cancelled" : "error: " + e.message;
}
if (waitFor) {
  const timer = setTimeout(() => arrived("timeout"), 10000);
  if (await reached === "timeout") out.wait = "progress " + waitFor + " never came";
  clearTimeout(timer);
}
out.echo = await client.callTool({ name: "echo", arguments: { [echoArg]: "after" } });
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
