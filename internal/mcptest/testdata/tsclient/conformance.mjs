// conformance.mjs is the TypeScript SDK client (this repository's
// node_modules) as the official conformance suite runs a client: node
// conformance.mjs URL, the scenario in $MCP_CONFORMANCE_SCENARIO. It does
// what each client scenario that needs no authorization asks: initialize
// (connect, list tools), tools_call (call add_numbers), the elicitation
// defaults (accept with nothing filled in, the SDK applying the
// schema's defaults) and sse-retry (call test_reconnection, whose stream
// the suite closes).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [url] = process.argv.slice(2);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO || "initialize";
const client = new Client({ name: "ts-conformance-client", version: "1.0.0" }, { capabilities: { elicitation: { form: { applyDefaults: true } } } });
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: "accept", content: {} }));
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
await client.listTools();
const calls = {
  tools_call: ["add_numbers", { a: 5, b: 3 }],
  "elicitation-sep1034-client-defaults": ["test_client_elicitation_defaults", {}],
  "sse-retry": ["test_reconnection", {}],
};
if (calls[scenario]) {
  const [name, args] = calls[scenario];
  console.log(JSON.stringify(await client.callTool({ name, arguments: args })));
}
await client.close();
