import { calcPrice } from '@pydantic/genai-prices';
import type { CatalogEntry } from './model-catalog.ts';

export interface ModelPrice {
  /** USD per million tokens (the base tier). */
  input: number;
  output: number;
}

const MILLION = 1_000_000;
// Listed prices are those of a small call: long-context tiers only apply to the calls that reach them.
const SAMPLE = 1000;
const cache = new Map<string, ModelPrice | null>();

const maintained = (model: CatalogEntry, input: number, output: number) =>
  calcPrice({ input_tokens: input, output_tokens: output }, model.upstream, {
    providerId: model.priceProvider ?? model.provider,
  });

/** The model's price: our catalog's where set, else the maintained @pydantic/genai-prices list, else null. */
export function priceOf(model: CatalogEntry): ModelPrice | null {
  if (model.price) return model.price;
  let price = cache.get(model.id);
  if (price === undefined) {
    const result = maintained(model, SAMPLE, SAMPLE);
    price = result
      ? { input: (result.input_price * MILLION) / SAMPLE, output: (result.output_price * MILLION) / SAMPLE }
      : null;
    cache.set(model.id, price);
  }
  return price;
}

/** Prompt-cache tokens of a call, each part of its input tokens; `write1h` of the writes are kept an hour. */
export interface CacheTokens {
  read?: number;
  write?: number;
  write1h?: number;
}

/** USD per million tokens of a flat price, the prompt cache's rates where the model has them. */
interface FlatRates extends ModelPrice {
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
}

/**
 * Per-token rates of a model whose maintained price is flat (not tiered by prompt length, not
 * depending on the date or time of day, no per-request fee; units we never report, such as web
 * searches, count zero): its cost is then computed here, as the package computes it, instead of
 * matching the model in the package's data on every call.
 */
const flatRates = new Map<string, FlatRates | null>();

function flatRatesOf(model: CatalogEntry): FlatRates | null {
  let rates = flatRates.get(model.id);
  if (rates === undefined) {
    const result = maintained(model, SAMPLE, SAMPLE);
    const {
      input_mtok: input,
      output_mtok: output,
      cache_read_mtok: cacheRead,
      cache_write_mtok: cacheWrite,
      cache_write_1h_mtok: cacheWrite1h,
    } = (result?.model_price ?? {}) as Record<string, unknown>;
    const flat =
      result &&
      !Array.isArray(result.model.prices) &&
      typeof input === 'number' &&
      typeof output === 'number' &&
      Object.entries(result.model_price).every(
        ([key, value]) => value === undefined || (typeof value === 'number' && !key.startsWith('requests')),
      );
    const rate = (value: unknown) => (typeof value === 'number' ? value : undefined);
    rates = flat
      ? {
          input: input as number,
          output: output as number,
          cacheRead: rate(cacheRead),
          cacheWrite: rate(cacheWrite),
          cacheWrite1h: rate(cacheWrite1h),
        }
      : null;
    flatRates.set(model.id, rates);
  }
  return rates;
}

/**
 * USD for a call (tiered prices included), or null when the model has no known price (the caller
 * logs it loudly). Cache reads and writes are priced at the provider's cache rates; a model
 * without them (or priced by our catalog) prices them as input.
 */
export function costOf(
  model: CatalogEntry,
  inputTokens: number,
  outputTokens: number,
  cache: CacheTokens = {},
): number | null {
  if (model.price) return (inputTokens * model.price.input + outputTokens * model.price.output) / MILLION;
  if (priceOf(model) === null) return null;
  const read = Math.min(cache.read ?? 0, inputTokens);
  const write = Math.min(cache.write ?? 0, inputTokens - read);
  const write1h = Math.min(cache.write1h ?? 0, write);
  const rates = flatRatesOf(model);
  if (rates) {
    // Term by term, as the package sums them, so an uncached call costs its figure exactly.
    const plain = (rates.input * (inputTokens - read - write)) / MILLION + (rates.output * outputTokens) / MILLION;
    if (read === 0 && write === 0) return plain;
    const cacheWrite = rates.cacheWrite ?? rates.input;
    return (
      plain +
      ((rates.cacheRead ?? rates.input) * read) / MILLION +
      (cacheWrite * (write - write1h)) / MILLION +
      ((rates.cacheWrite1h ?? cacheWrite) * write1h) / MILLION
    );
  }
  const usage = {
    input_tokens: inputTokens,
    output_tokens: outputTokens,
    cache_read_tokens: read,
    cache_write_tokens: write,
  };
  return calcPrice(usage, model.upstream, { providerId: model.priceProvider ?? model.provider })?.total_price ?? null;
}

/** The most `inputTokens` prompt tokens and `outputTokens` output can cost on `model`, every prompt token possibly a cache write (dearer than input). */
export function worstCostOf(model: CatalogEntry, inputTokens: number, outputTokens: number): number | null {
  const plain = costOf(model, inputTokens, outputTokens);
  const written = costOf(model, inputTokens, outputTokens, { write: inputTokens, write1h: inputTokens });
  return plain === null || written === null ? null : Math.max(plain, written);
}
