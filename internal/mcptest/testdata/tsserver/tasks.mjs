// tasks.mjs is a small TypeScript SDK server over stdio for mcpvcr's task
// tests: its one tool, simulate-research-query (the arguments of
// server-everything's), runs as a task (taskSupport required) through
// $TASK_STAGES stages of $TASK_STAGE_MS ms (default 4 of 1000, as
// server-everything's), then ends with status $TASK_END (default
// completed; failed or cancelled otherwise) and a result naming it.
// With $TASK_NOTIFY=0 it sends no notifications/tasks/status: a client
// learns the task's state only by polling.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { InMemoryTaskStore, InMemoryTaskMessageQueue } from "@modelcontextprotocol/sdk/experimental/tasks";
import { z } from "zod";

const stages = Number(process.env.TASK_STAGES || 4);
const stageMs = Number(process.env.TASK_STAGE_MS || 1000);
const end = process.env.TASK_END || "completed";
const notify = process.env.TASK_NOTIFY !== "0";

const store = new InMemoryTaskStore();
const server = new McpServer({ name: "mcpvcr-task-server", version: "1.0.0" }, {
  capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
  taskStore: store,
  taskMessageQueue: new InMemoryTaskMessageQueue(),
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

server.experimental.tasks.registerToolTask("simulate-research-query", {
  description: "Runs a task through stages, then ends it as $TASK_END says.",
  inputSchema: { topic: z.string(), ambiguous: z.boolean().default(false) },
  execution: { taskSupport: "required" },
}, {
  createTask: async (args, extra) => {
    const task = await extra.taskStore.createTask({ ttl: 300000, pollInterval: 1000 });
    // extra.taskStore notifies on every change; store does not.
    const ts = notify ? extra.taskStore : store;
    (async () => {
      for (let i = 0; i < stages; i++) {
        await ts.updateTaskStatus(task.taskId, "working", `Stage ${i + 1}...`);
        await sleep(stageMs);
      }
      const text = `# Research Report: ${args.topic} (${end})`;
      await ts.storeTaskResult(task.taskId, end, { content: [{ type: "text", text }], isError: end !== "completed" });
    })().catch((err) => console.error("task failed:", err));
    return { task };
  },
  getTask: async (args, extra) => await extra.taskStore.getTask(extra.taskId),
  getTaskResult: async (args, extra) => await extra.taskStore.getTaskResult(extra.taskId),
});

await server.connect(new StdioServerTransport());
