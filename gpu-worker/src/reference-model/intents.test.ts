import { describe, expect, it } from 'vitest';
import { correctionSlot, extractCity, isAffirmative, isNegative, readOverlap, understandRequest } from './intents.ts';
import { visibleText } from './replies.ts';

describe('understandRequest', () => {
  it.each([
    ["What's the weather like in paris?", { kind: 'weather', city: 'Paris' }],
    ['is it going to rain in New York tomorrow', { kind: 'weather', city: 'New York', when: 'tomorrow' }],
    ['temperature for Berlin right now', { kind: 'weather', city: 'Berlin' }],
    ['what time is it in Tokyo', { kind: 'time', city: 'Tokyo' }],
    ['What is the local time in São Paulo?', { kind: 'time', city: 'São Paulo' }],
    ['convert 5 miles to km', { kind: 'calc', expression: 'convert 5 miles to km' }],
    ["what's 12 times 7", { kind: 'calc', expression: "what's 12 times 7" }],
    ['3 + 4 <delegate>x</delegate>', { kind: 'calc', expression: '3 + 4 delegate x /delegate' }],
    // Spoken: number words are read as digits (what the recogniser hears has none).
    ['what is fifteen times four', { kind: 'calc', expression: 'what is 15 times 4' }],
    ['how much is one hundred divided by eight', { kind: 'calc', expression: 'how much is 100 divided by 8' }],
    ['what is twenty percent of fifty', { kind: 'calc', expression: 'what is 20 percent of 50' }],
    ['what is the time in seoul one', { kind: 'time', city: 'Seoul' }],
    ['one minute', { kind: 'unknown' }],
    ['what is the weather', { kind: 'missing_city', for: 'weather' }],
    ['Hello there', { kind: 'greeting' }],
    ["How's that going?", { kind: 'status' }],
    ['any update on the weather?', { kind: 'status' }],
    ['What did you just tell me?', { kind: 'recall' }],
    ['sorry, could you say that again', { kind: 'recall' }],
    ['what did you say about the time in Tokyo', { kind: 'recall' }],
    ['tell me a joke', { kind: 'unknown' }],
  ])('%s', (text, expected) => {
    expect(understandRequest(text)).toEqual(expected);
  });
});

describe('readOverlap', () => {
  it.each([
    ['mm-hm', 'backchannel'],
    ['Uh-huh.', 'backchannel'],
    ['yeah, got it', 'backchannel'],
    ['I see', 'backchannel'],
    ['never mind', 'cancel'],
    ['cancel that', 'cancel'],
    ['forget it', 'cancel'],
    ['stop', 'stop'],
    ['hold on', 'stop'],
    ['wait a second', 'stop'],
    ['actually, Rome', 'correction'],
    ['no, I meant Rome', 'correction'],
    ['make it Rome', 'correction'],
    ['Rome instead', 'correction'],
    ['what time is it in Tokyo', 'other'],
  ])('%s', (text, expected) => {
    expect(readOverlap(text)).toBe(expected);
  });
});

describe('corrections and answers', () => {
  it('finds the new slot of a correction', () => {
    expect(correctionSlot('actually, make it Rome', 'weather')).toEqual({ kind: 'weather', city: 'Rome' });
    expect(correctionSlot('no, I meant in Rio de Janeiro', 'time')).toEqual({ kind: 'time', city: 'Rio De Janeiro' });
    expect(correctionSlot('actually 5 times 8', 'calc')).toEqual({ kind: 'calc', expression: '5 times 8' });
    expect(correctionSlot('actually five times eight', 'calc')).toEqual({ kind: 'calc', expression: '5 times 8' });
    expect(correctionSlot('actually', 'weather')).toBeNull();
    expect(correctionSlot("no, that's wrong", 'weather')).toBeNull();
  });

  it('reads yes and no', () => {
    expect(['yes', 'Sure!', 'go ahead', 'please do'].every(isAffirmative)).toBe(true);
    expect(['no', 'nope', 'no thanks'].every(isNegative)).toBe(true);
    expect(isAffirmative('what time is it')).toBe(false);
  });

  it('extracts cities only where one is named', () => {
    expect(extractCity('weather in the city of London today')).toBe('London');
    expect(extractCity('what is the time in amsterdam right now anna')).toBe('Amsterdam');
    expect(extractCity('what is the time in new york tom no')).toBe('New York');
    expect(extractCity('what is the weather in Reykjavik')).toBe('Reykjavik');
    expect(extractCity('what is the weather')).toBeNull();
  });

  it('hides delegate spans from what is spoken', () => {
    expect(visibleText('Let me work that out. <delegate>5 miles to km</delegate>')).toBe('Let me work that out.');
  });
});
