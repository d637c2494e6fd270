import { randomUUID } from 'node:crypto';
import {
  buildEvidence,
  createBuiltinFunctions,
  DelegationRunner,
  FunctionRegistry,
  LlmPlanner,
  llmPlannerFromEnv,
  RouterPlanner,
} from '@venus/harness-functions';
import type { DelegationRequest } from '@venus/protocol';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAiCompatibleServer } from './fixtures/openai-compatible-server.ts';

/**
 * The model-backed planner over the OpenAI chat completions wire format. No language model runs on
 * this machine, so the endpoint is the scripted stand-in server of the cascade tests (FAKE model
 * answers, real HTTP and the real request/response shapes); what is tested is the planner's side.
 */
let server: OpenAiCompatibleServer;
const registry = new FunctionRegistry(createBuiltinFunctions({ latencyMs: 0 }));
const signal = new AbortController().signal;

beforeAll(async () => {
  server = await OpenAiCompatibleServer.start({ apiKey: 'sk-planner' });
});
afterAll(async () => {
  await server.close();
});
beforeEach(() => {
  server.reset();
});

const request = (query: string): DelegationRequest => ({
  workId: `w-${randomUUID()}`,
  session: 's1',
  incarnation: 0,
  tenant: 'default',
  query,
  evidenceCutoffSeq: 0,
  chunk: 0,
  createdAtMs: Date.now(),
});

function runner(fallback?: RouterPlanner): DelegationRunner {
  const planner = new LlmPlanner({
    baseUrl: server.baseUrl,
    model: 'planner-model',
    apiKey: 'sk-planner',
    ...(fallback ? { fallback } : {}),
  });
  return new DelegationRunner({ registry, planner });
}

describe('LlmPlanner', () => {
  it("offers the functions as tools and runs the one the model calls, with the model's arguments", async () => {
    server.chatScripts.push({ toolCall: { name: 'world_clock', arguments: '{"city":"Tokyo","ask":"date"}' } });
    const outcome = await runner().run(request('what day is it over in Tokyo'), { signal });
    expect(outcome).toMatchObject({ ok: true, functionName: 'world_clock' });
    const chat = server.chats.at(-1)!;
    expect(chat.model).toBe('planner-model');
    expect(chat.messages.at(-1)).toEqual({ role: 'user', content: 'what day is it over in Tokyo' });
    const offered = (chat.tools as { function: { name: string; parameters: { properties: object } } }[]).map(
      (tool) => tool.function,
    );
    expect(offered.map((fn) => fn.name).sort()).toEqual(
      registry
        .list()
        .map((fn) => fn.name)
        .sort(),
    );
    expect(offered.find((fn) => fn.name === 'world_clock')?.parameters.properties).toHaveProperty('city');
  });

  it("offers the session's client functions too, and hands back the call of the one the model picks", async () => {
    server.chatScripts.push({ toolCall: { name: 'lookup_order', arguments: '{"order_id":"A-17"}' } });
    const lookupOrder = {
      name: 'lookup_order',
      description: 'Finds where a customer order is.',
      parameters: {
        type: 'object' as const,
        properties: { order_id: { type: 'string' } },
        required: ['order_id'],
        additionalProperties: false,
      },
    };
    const outcome = await runner().run(
      { ...request('has my parcel left yet'), clientFunctions: [lookupOrder] },
      { signal },
    );
    expect(outcome).toMatchObject({ ok: true, functionName: 'lookup_order' });
    expect(outcome.result.clientCall).toEqual({ name: 'lookup_order', arguments: '{"order_id":"A-17"}' });
    const offered = (server.chats.at(-1)!.tools as { function: { name: string; description: string } }[]).map(
      (tool) => tool.function,
    );
    expect(offered.find((fn) => fn.name === 'lookup_order')?.description).toBe('Finds where a customer order is.');
  });

  it('gives the model the conversation up to the evidence cutoff before the request', async () => {
    server.chatScripts.push({ toolCall: { name: 'weather', arguments: '{"city":"Paris","when":"tomorrow"}' } });
    const evidence = buildEvidence('s1', 3, [
      {
        session: 's1',
        seq: 1,
        chunk: 0,
        atMs: 0,
        stream: 'user',
        type: 'user.text',
        data: { inputSeq: 0, itemId: 'i1', text: 'I am flying to Paris.' },
      },
      {
        session: 's1',
        seq: 2,
        chunk: 1,
        atMs: 160,
        stream: 'assistant',
        type: 'assistant.utterance',
        data: { utteranceId: 'u1', phase: 'started' },
      },
      {
        session: 's1',
        seq: 3,
        chunk: 1,
        atMs: 170,
        stream: 'assistant',
        type: 'assistant.interruption',
        data: {
          action: 'discard',
          cause: 'interruption',
          utteranceId: 'u1',
          heardMs: 400,
          heardText: 'Have a good',
          cancelledWork: [],
        },
      },
    ]);
    const outcome = await runner().run(request('what will the weather be there tomorrow'), {
      signal,
      evidence: { ...evidence, complete: true },
    });
    expect(outcome).toMatchObject({ ok: true, functionName: 'weather' });
    const { messages } = server.chats.at(-1)!;
    expect(messages.at(-2)).toEqual({
      role: 'system',
      content: 'The conversation so far:\nuser: I am flying to Paris.\nassistant (interrupted; heard): Have a good',
    });
    expect(messages.at(-1)).toEqual({ role: 'user', content: 'what will the weather be there tomorrow' });
  });

  it('reports nothing fits when the model calls no tool', async () => {
    server.chatScripts.push({ chunks: ['none'] });
    const outcome = await runner().run(request('sing me a song'), { signal });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'function_not_found' } });
  });

  it('hands arguments that break the schema to the runner, which refuses them', async () => {
    server.chatScripts.push({ toolCall: { name: 'world_clock', arguments: '{"city":""}' } });
    const outcome = await runner().run(request('what time is it'), { signal });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'invalid_arguments' } });
  });

  it('falls back to the router when the endpoint fails or calls something it was not offered', async () => {
    server.chatScripts.push({ status: 500 }, { toolCall: { name: 'launch_rockets', arguments: '{}' } });
    const fallback = runner(new RouterPlanner());
    expect(await fallback.run(request('What time is it in Tokyo?'), { signal })).toMatchObject({
      ok: true,
      functionName: 'world_clock',
    });
    expect(await fallback.run(request('What is 6 times 7?'), { signal })).toMatchObject({
      ok: true,
      functionName: 'calculator',
    });
    expect(server.chats).toHaveLength(2);
  });

  it('without a fallback, reports the endpoint failure as the function failing', async () => {
    server.chatScripts.push({ status: 503 });
    const outcome = await runner().run(request('What time is it in Tokyo?'), { signal });
    expect(outcome).toMatchObject({ ok: false, error: { code: 'function_failed' } });
  });

  it('is configured from VENUS_PLANNER_* (and is off without them)', async () => {
    const fallback = new RouterPlanner();
    expect(llmPlannerFromEnv({}, fallback)).toBeUndefined();
    const planner = llmPlannerFromEnv(
      { VENUS_PLANNER_BASE_URL: server.baseUrl, VENUS_PLANNER_MODEL: 'env-model', VENUS_PLANNER_API_KEY: 'sk-planner' },
      fallback,
    );
    server.chatScripts.push({
      toolCall: { name: 'calculator', arguments: '{"kind":"arithmetic","expression":"6*7"}' },
    });
    const outcome = await new DelegationRunner({ registry, planner: planner! }).run(request('six sevens'), { signal });
    expect(outcome).toMatchObject({ ok: true, functionName: 'calculator' });
    expect(server.chats.at(-1)?.model).toBe('env-model');
  });
});
