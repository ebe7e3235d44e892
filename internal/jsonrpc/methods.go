package jsonrpc

// methodName returns b as a string, without allocating for the methods
// of MCP's revisions: the recorder parses every frame, and most frames
// carry one of these.
func methodName(b []byte) string {
	if s, ok := methods[string(b)]; ok {
		return s
	}
	return string(b)
}

var methods = func() map[string]string {
	m := map[string]string{}
	for _, s := range []string{
		"initialize", "ping", "server/discover", "subscriptions/listen",
		"tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read",
		"resources/subscribe", "resources/unsubscribe", "prompts/list", "prompts/get",
		"completion/complete", "logging/setLevel", "sampling/createMessage", "elicitation/create",
		"roots/list", "tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
		"notifications/initialized", "notifications/cancelled", "notifications/progress",
		"notifications/message", "notifications/resources/updated", "notifications/resources/list_changed",
		"notifications/tools/list_changed", "notifications/prompts/list_changed",
		"notifications/roots/list_changed", "notifications/elicitation/complete", "notifications/tasks/status",
	} {
		m[s] = s
	}
	return m
}()
