"""LLM inference: chat providers (OpenAI-compatible, Anthropic), retries, usage and cost,
and the workload registry over `inference.*` (docs/INFERENCE.md).

Entry points: `types` (ChatMessage, ChatRequest, ChatResponse, ChatProvider …), `errors`,
`registry.provider_for` / `workloads.WorkloadProviders`, `accounting.UsageMeter`,
`status.inference_status`.
"""
