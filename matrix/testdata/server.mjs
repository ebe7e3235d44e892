// server.mjs is the TypeScript SDK server of mcpvcr's matrix (package
// matrix), written for it with the SDK's McpServer (1.32.2): node
// server.mjs stdio, or node server.mjs http (stateful Streamable HTTP on
// 127.0.0.1, a port of its own, path /mcp, with the SDK's in-memory event
// store so that its SSE answers carry event ids; it prints "listening on
// URL" once it listens). Its tools mirror the Go SDK test server's
// (internal/mcptest), so that the matrix's scenarios run on both:
// echo {text}, add {a, b}, fail, progress {steps} (progress i of steps),
// sample {prompt} (sampling/createMessage), elicit (elicitation/create),
// roots (roots/list), slow (progress 1 "started", then waits for its
// cancellation and honours it) and stubborn (progress 1 "started", waits
// for its cancellation, then progress 2 "after cancel" and an answer).
import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { InMemoryEventStore } from "@modelcontextprotocol/sdk/examples/shared/inMemoryEventStore.js";
import { CreateMessageResultSchema, ElicitResultSchema, ListRootsResultSchema, isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const text = (t) => ({ content: [{ type: "text", text: t }] });
const cancelled = (signal) => new Promise((resolve) => {
  if (signal.aborted) resolve();
  else signal.addEventListener("abort", () => resolve(), { once: true });
});

function newServer() {
  const server = new McpServer({ name: "matrix-ts-server", version: "1.0.0" });
  const progress = (extra, value, fields) => {
    const token = extra._meta?.progressToken;
    if (token === undefined) return Promise.resolve();
    return extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: value, ...fields } });
  };
  server.registerTool("echo", { description: "Echoes its text argument.", inputSchema: { text: z.string() } },
    async ({ text: t }) => text(t));
  server.registerTool("add", { description: "Adds a and b.", inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ ...text(String(a + b)), structuredContent: { sum: a + b } }));
  server.registerTool("fail", { description: "Always fails with an error result." },
    async () => ({ ...text("failed on purpose"), isError: true }));
  server.registerTool("progress", { description: "Sends progress i of steps.", inputSchema: { steps: z.number() } },
    async ({ steps }, extra) => {
      for (let i = 1; i <= steps; i++) await progress(extra, i, { total: steps, message: `step ${i} of ${steps}` });
      return text(`completed ${steps} steps`);
    });
  server.registerTool("sample", { description: "Asks the client's model.", inputSchema: { prompt: z.string() } },
    async ({ prompt }, extra) => {
      const r = await extra.sendRequest({ method: "sampling/createMessage", params: {
        messages: [{ role: "user", content: { type: "text", text: prompt } }], maxTokens: 50 } }, CreateMessageResultSchema);
      return text(`${r.model}: ${r.content.text}`);
    });
  server.registerTool("elicit", { description: "Asks the user for a name." },
    async (extra) => {
      const r = await extra.sendRequest({ method: "elicitation/create", params: {
        message: "What is your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } } }, ElicitResultSchema);
      return text(`${r.action}: ${r.content?.name ?? ""}`);
    });
  server.registerTool("roots", { description: "Lists the client's roots." },
    async (extra) => {
      const r = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema);
      return text(r.roots.map((x) => x.uri).join(" "));
    });
  server.registerTool("slow", { description: "Progress \"started\", then waits for its cancellation and honours it." },
    async (extra) => {
      await progress(extra, 1, { message: "started" });
      await cancelled(extra.signal);
      throw new Error("slow: cancelled");
    });
  server.registerTool("stubborn", { description: "Progress \"started\", waits for its cancellation, then goes on anyway." },
    async (extra) => {
      await progress(extra, 1, { message: "started" });
      await cancelled(extra.signal);
      await progress(extra, 2, { message: "after cancel" });
      return text("finished anyway");
    });
  return server;
}

const mode = process.argv[2] || "stdio";
if (mode === "stdio") {
  await newServer().connect(new StdioServerTransport());
} else {
  const transports = new Map();
  const body = (req) => new Promise((resolve, reject) => {
    let b = "";
    req.setEncoding("utf8");
    req.on("data", (c) => { b += c; });
    req.on("end", () => resolve(b));
    req.on("error", reject);
  });
  const srv = http.createServer(async (req, res) => {
    try {
      if (!req.url.startsWith("/mcp")) { res.writeHead(404).end(); return; }
      const sid = req.headers["mcp-session-id"];
      const parsed = req.method === "POST" ? JSON.parse(await body(req)) : undefined;
      let transport = sid ? transports.get(sid) : undefined;
      if (!transport) {
        if (sid || req.method !== "POST" || !isInitializeRequest(parsed)) {
          res.writeHead(sid ? 404 : 400, { "content-type": "application/json" })
            .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message: "no such session" }, id: null }));
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          eventStore: new InMemoryEventStore(),
          onsessioninitialized: (id) => { transports.set(id, transport); },
        });
        transport.onclose = () => { if (transport.sessionId) transports.delete(transport.sessionId); };
        await newServer().connect(transport);
      }
      await transport.handleRequest(req, res, parsed);
    } catch (e) {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    }
  });
  srv.listen(0, "127.0.0.1", () => {
    process.stdout.write(`listening on http://127.0.0.1:${srv.address().port}/mcp\n`);
  });
  const stop = () => { srv.closeAllConnections(); srv.close(() => process.exit(0)); };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
