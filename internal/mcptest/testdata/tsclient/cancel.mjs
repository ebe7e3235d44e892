// cancel.mjs drives a TypeScript SDK client for mcpvcr's cancellation
// tests: it connects (over stdio: node cancel.mjs stdio CMD ARGS...; over
// Streamable HTTP: node cancel.mjs http URL), lists the tools, calls
// trigger-long-running-operation {duration 1.2, steps 6} with progress
// token "cancel-1", aborts the call when progress $CANCEL_AT arrives
// (never when unset), waits until progress $WAIT_FOR has arrived (if set),
// calls echo, and prints what it saw as one line of JSON on stdout.
// $CLIENT_NAME names the client in initialize.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ProgressNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
const cancelAt = Number(process.env.CANCEL_AT || 0);
const waitFor = Number(process.env.WAIT_FOR || 0);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const client = new Client({ name: process.env.CLIENT_NAME || "ts-client", version: "1.0.0" });
const out = { progress: [] };
const ac = new AbortController();
let arrived = () => {};
const reached = new Promise((resolve) => { arrived = resolve; });
// Every progress notification, whether or not the SDK still tracks its
// request: what comes after the cancellation is what the test looks at.
client.setNotificationHandler(ProgressNotificationSchema, (n) => {
  if (n.params.progressToken !== "cancel-1") return;
  out.progress.push(n.params.progress);
  if (n.params.progress === cancelAt) {
    out.progress.push("cancel");
    ac.abort("changed my mind");
  }
  if (n.params.progress === waitFor) arrived();
});
await client.connect(transport);
out.tools = (await client.listTools()).tools.length;
try {
  const res = await client.callTool(
    { name: "trigger-long-running-operation", arguments: { duration: 1.2, steps: 6 }, _meta: { progressToken: "cancel-1" } },
    undefined, { signal: ac.signal, timeout: 20000 });
  out.call = res;
} catch (e) {
  out.call = ac.signal.aborted ? "cancelled" : "error: " + e.message;
}
if (waitFor) {
  const timer = setTimeout(() => arrived("timeout"), 10000);
  if (await reached === "timeout") out.wait = "progress " + waitFor + " never came";
  clearTimeout(timer);
}
out.echo = await client.callTool({ name: "echo", arguments: { message: "after" } });
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
