// probe.mjs drives a TypeScript SDK client for mcpvcr's probe tests:
// node probe.mjs URL connects over Streamable HTTP (with $TRANSPORT=sse,
// HTTP+SSE; with URL "stdio", over its own stdin and stdout), declares roots (and
// answers roots/list with one root), then does what the Go SDK client of
// the probe tests does: lists the tools (one page: the SDK does not page
// on its own), calls echo "hi", calls roots (the server asks roots/list)
// and lists the prompts. It goes on after a step fails, as a program
// that reports the error and carries on, and prints each step's outcome
// as one line of JSON on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { createInterface } from "node:readline";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

// ownStdio is a client transport over this process's own stdin and
// stdout (one JSON-RPC message a line): the test that runs this script
// is the server, or a recorder in front of one. What the script saw then
// goes to stderr.
class ownStdio {
  async start() {
    const rl = createInterface({ input: process.stdin });
    rl.on("line", (line) => {
      if (!line.trim()) return;
      try {
        this.onmessage?.(JSON.parse(line));
      } catch (e) {
        this.onerror?.(e);
      }
    });
    rl.on("close", () => this.onclose?.());
  }
  async send(message) {
    process.stdout.write(JSON.stringify(message) + "\n");
  }
  async close() {
    process.stdin.destroy();
    this.onclose?.();
  }
}

const [url] = process.argv.slice(2);
let transport;
if (url === "stdio") {
  transport = new ownStdio();
} else if (process.env.TRANSPORT === "sse") {
  transport = new SSEClientTransport(new URL(url));
} else {
  transport = new StreamableHTTPClientTransport(new URL(url), {
    reconnectionOptions: { initialReconnectionDelay: 50, maxReconnectionDelay: 200, reconnectionDelayGrowFactor: 1.5, maxRetries: 2 },
  });
}
const client = new Client({ name: "ts-probe-client", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///mcptest/alpha", name: "alpha" }] }));
const out = [];
const opts = { timeout: 10000 };
async function step(name, f) {
  try {
    await f();
    out.push(name + ": ok");
  } catch (e) {
    out.push(name + ": " + e.message);
  }
}
try {
  await client.connect(transport);
  out.push("connect: " + (transport.protocolVersion || "ok"));
  await step("tools/list", () => client.listTools(undefined, opts));
  await step("echo", () => client.callTool({ name: "echo", arguments: { text: "hi" } }, undefined, opts));
  await step("roots", () => client.callTool({ name: "roots", arguments: {} }, undefined, opts));
  await step("prompts/list", () => client.listPrompts(undefined, opts));
} catch (e) {
  out.push("connect: " + e.message);
}
await client.close().catch(() => {});
(url === "stdio" ? console.error : console.log)(JSON.stringify(out));
