// session.mjs drives a TypeScript SDK client through one ordinary session,
// for mcpvcr's verify tests: it connects (over stdio: node session.mjs
// stdio CMD ARGS...; over Streamable HTTP: node session.mjs http URL),
// declaring the roots capability and answering roots/list with one root,
// lists the tools, calls echo with argument $ECHO_ARG (default hello),
// waits $LINGER_MS milliseconds (default 0) and closes. It prints what it
// saw as one line of JSON on stdout.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, ...rest] = process.argv.slice(2);
const transport = mode === "stdio"
  ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(rest[0]));
const client = new Client(
  { name: process.env.CLIENT_NAME || "ts-session", version: "1.0.0" },
  { capabilities: { roots: { listChanged: true } } });
const out = { roots: 0 };
client.setRequestHandler(ListRootsRequestSchema, () => {
  out.roots++;
  return { roots: [{ uri: "file:///tmp/mcpvcr-root", name: "root" }] };
});
await client.connect(transport);
out.tools = (await client.listTools()).tools.length;
const echo = await client.callTool({ name: "echo", arguments: { message: process.env.ECHO_ARG || "hello" } });
out.echo = echo.content?.[0]?.text;
await new Promise((resolve) => setTimeout(resolve, Number(process.env.LINGER_MS || 0)));
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
