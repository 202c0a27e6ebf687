import type { Identity } from '@agentyard/identity';
import type { GatewayPluginName } from '@agentyard/proto-schemas';
import type { Access } from '../plan-access.ts';
import { chooseModel } from '../plan-access.ts';
import { estimateTokens, type Caller, type ChatGateway } from '../chat-gateway.ts';
import { fetchPage } from '../summarizer/page-fetch.ts';
import { readPage } from '../summarizer/page-reading.ts';
import { summarizePage } from '../summarizer/page-summary.ts';
import type { GuardedFetchOptions } from '@agentyard/http';
import { askAgent, type AgentTurnTarget } from './agent-turn.ts';

/** What a plugin answers (the route adds the id, the plugin's name and the payment). */
export interface PluginResult {
  output: string;
  agentId?: string;
  model?: string;
  url?: string;
  usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
}

export interface PluginCall {
  plugin: GatewayPluginName;
  caller: Caller;
  access: Access;
  /** The identity the edge signed for this request (the agent plugin carries it one hop on). */
  identity: Identity;
  input: string;
  agentId?: string;
  model?: string;
  maxTokens?: number;
}

export interface GatewayPluginDeps {
  gateway: ChatGateway;
  agentTurns: AgentTurnTarget;
  fetching: GuardedFetchOptions;
  /** The plan's token quota, checked before an AI call of the gateway's own (the agent's calls check theirs). */
  checkQuota: (access: Access, caller: Caller, admin: boolean) => Promise<void>;
}

const usageOf = (input: number, output: number) => ({
  promptTokens: input,
  completionTokens: output,
  totalTokens: input + output,
});

/** Runs one plugin of POST /api/v1/gateway for a caller whose plan and fee are settled. */
export async function runPlugin(deps: GatewayPluginDeps, call: PluginCall): Promise<PluginResult> {
  switch (call.plugin) {
    case 'agent': {
      const answer = await askAgent(deps.agentTurns, call.identity, { agentId: call.agentId!, message: call.input });
      return { output: answer.content, agentId: call.agentId, ...(answer.usage ? { usage: answer.usage } : {}) };
    }
    case 'generate-text': {
      await deps.checkQuota(call.access, call.caller, call.identity.admin);
      const model = chooseModel(call.access, call.model, 'general', deps.gateway.isUsable);
      const served = await deps.gateway.complete(
        model,
        call.access.models,
        { messages: [{ role: 'user', content: call.input }], max_tokens: call.maxTokens },
        call.caller,
      );
      const tokens = served.completion.usage ?? {
        input: estimateTokens(call.input),
        output: estimateTokens(served.completion.content),
      };
      return { output: served.completion.content, model: served.model.id, usage: usageOf(tokens.input, tokens.output) };
    }
    case 'summarize': {
      await deps.checkQuota(call.access, call.caller, call.identity.admin);
      const page = await fetchPage(call.input, deps.fetching);
      const summary = await summarizePage(deps.gateway, call.access, call.caller, readPage(page.html), call.maxTokens);
      return { output: summary.summary, url: page.url, model: summary.model, usage: summary.usage };
    }
  }
}
