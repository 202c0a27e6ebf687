import { UpstreamError, type Log } from '@agentyard/http';
import type { EventSourceMessage } from 'eventsource-parser';
import { AiErrors } from '../errors.ts';
import { ownKeyRefused, type Caller, type ChatGateway } from './chat-gateway.ts';
import type { CatalogEntry, ProviderName } from './model-catalog.ts';
import type { PassThroughClient } from './providers/pass-through.ts';
import type { TokenUsage } from './providers/index.ts';
import type { Hold } from './spending/privileged/spend-counters.ts';
import type { Attempt } from './providers/retries.ts';

/** What a stream has told so far: its usage, the tools its answer called, and its output as text (for an estimate when it is cut short). */
export interface StreamTally {
  usage: TokenUsage | null;
  tools: string[];
  text: string;
}

/** One provider API the gateway passes through: how a body is bounded and priced before the call, and how an answer's usage is read. */
export interface WireSpec {
  /** The provider whose models this wire serves. */
  provider: ProviderName;
  /** Which catalog models it serves (chat models, embedding models). */
  serves(model: CatalogEntry): boolean;
  /** The body the provider is sent (priced fields only, the upstream model name, output bounded) and the most it can cost; throws 400 for what cannot be priced. */
  prepare(model: CatalogEntry, body: Record<string, unknown>): { sent: Record<string, unknown>; maximumUsd: number };
  usageOf(answer: Record<string, unknown>): TokenUsage | null;
  toolsOf(answer: Record<string, unknown>): string[];
  /** Reads one event of a stream into its tally. */
  tally(tally: StreamTally, type: unknown, data: Record<string, unknown>): void;
  /** The user turns a body holds (usage rows count them). */
  turns(sent: Record<string, unknown>): number;
  /** Tokens a body's prompt would count for, for an answer that reported none (an estimate: logged). */
  estimate(sent: Record<string, unknown>): number;
}

/**
 * A provider API passed through for the models of its provider: the caller's body reaches the
 * provider as sent bar the fields not priced by tokens and an output bound, its most expensive
 * outcome is reserved first, and its usage (prompt-cache reads and writes at their rates) recorded.
 * Retried on the provider's 429 and 5xx as chat is (the gateway's retry policy), never elsewhere:
 * no other provider speaks the wire.
 */
export class PassThroughGateway {
  private readonly client: PassThroughClient | null;
  private readonly spec: WireSpec;
  private readonly gateway: ChatGateway;
  private readonly log: Pick<Log, 'warn'>;
  private readonly withKey: ((apiKey: string) => PassThroughClient) | null;

  constructor(
    client: PassThroughClient | null,
    spec: WireSpec,
    gateway: ChatGateway,
    log: Pick<Log, 'warn'>,
    withKey: ((apiKey: string) => PassThroughClient) | null = null,
  ) {
    this.client = client;
    this.spec = spec;
    this.gateway = gateway;
    this.log = log;
    this.withKey = withKey;
  }

  /** The caller's own key's client when they brought one for this provider (BYOK), else the platform's. */
  private clientOf(caller: Caller): PassThroughClient {
    return caller.ownKey?.provider === this.spec.provider && this.withKey
      ? this.withKey(caller.ownKey.apiKey)
      : this.client!;
  }

  /** The plan's models this wire serves (none while its provider has no key). */
  servedOf(allowed: CatalogEntry[]): CatalogEntry[] {
    return this.client ? allowed.filter((m) => m.provider === this.spec.provider && this.spec.serves(m)) : [];
  }

  private async admitted(
    model: CatalogEntry,
    body: Record<string, unknown>,
    caller: Caller,
  ): Promise<{ sent: Record<string, unknown>; hold: Hold | null }> {
    const { sent, maximumUsd } = this.spec.prepare(model, body);
    return { sent, hold: await this.gateway.reserve(caller, maximumUsd) };
  }

  private refused(model: CatalogEntry, error: unknown, caller: Caller): never {
    const status = (error as UpstreamError).status;
    this.log.warn(
      { provider: model.provider, model: model.id, status, reason: (error as Error).message },
      'provider call failed',
    );
    if (caller.ownKey?.provider === model.provider) ownKeyRefused(model, error);
    // The caller's own mistake (a malformed body) is told as such; the provider's trouble is ours.
    if (
      error instanceof UpstreamError &&
      status !== undefined &&
      status >= 400 &&
      status < 500 &&
      status !== 401 &&
      status !== 403 &&
      status !== 429
    )
      throw AiErrors.providerRefused(status);
    throw AiErrors.chatFailed();
  }

  async complete(model: CatalogEntry, body: Record<string, unknown>, caller: Caller): Promise<Record<string, unknown>> {
    const { sent, hold } = await this.admitted(model, body, caller);
    const attempts: Attempt[] = [];
    let answer: Record<string, unknown>;
    try {
      answer = await this.gateway.attempt(model, Date.now(), attempts, () => this.clientOf(caller).send(sent));
    } catch (error) {
      this.gateway.unserved(model, caller, hold, attempts, error);
      this.refused(model, error, caller);
    }
    const usage = this.spec.usageOf(answer) ?? this.estimated(model, sent, JSON.stringify(answer));
    this.gateway.recordServed(model, caller, usage, this.spec.turns(sent), this.spec.toolsOf(answer), hold, attempts);
    return answer;
  }

  /** Opens the provider's stream; its events pass on as sent, and the call is recorded when it ends, however it ends. */
  async stream(
    model: CatalogEntry,
    body: Record<string, unknown>,
    caller: Caller,
  ): Promise<AsyncGenerator<EventSourceMessage>> {
    const { sent, hold } = await this.admitted(model, body, caller);
    const attempts: Attempt[] = [];
    let events: AsyncGenerator<EventSourceMessage>;
    try {
      events = await this.gateway.attempt(model, Date.now(), attempts, () => this.clientOf(caller).open(sent));
    } catch (error) {
      this.gateway.unserved(model, caller, hold, attempts, error);
      this.refused(model, error, caller);
    }
    return this.tracked(model, sent, caller, events, hold, attempts);
  }

  private async *tracked(
    model: CatalogEntry,
    sent: Record<string, unknown>,
    caller: Caller,
    events: AsyncGenerator<EventSourceMessage>,
    hold: Hold | null,
    attempts: Attempt[],
  ): AsyncGenerator<EventSourceMessage> {
    const tally: StreamTally = { usage: null, tools: [], text: '' };
    try {
      for await (const event of events) {
        let data: Record<string, unknown> = {};
        try {
          data = JSON.parse(event.data);
        } catch {
          /* passed on as sent; nothing to count in it */
        }
        this.spec.tally(tally, event.event ?? data.type, data);
        yield event;
      }
    } finally {
      // A stream cut short is billed what it told of its prompt, and its output as far as it came.
      const told = tally.usage ?? this.estimated(model, sent, '');
      const output = told.output > 0 ? told.output : Math.ceil(tally.text.length / 4);
      this.gateway.recordServed(model, caller, { ...told, output }, this.spec.turns(sent), tally.tools, hold, attempts);
    }
  }

  private estimated(model: CatalogEntry, sent: Record<string, unknown>, output: string): TokenUsage {
    this.log.warn(
      { provider: model.provider, model: model.id },
      'provider reported no token usage: recorded an estimate',
    );
    return { input: this.spec.estimate(sent), output: Math.ceil(output.length / 4) };
  }
}
