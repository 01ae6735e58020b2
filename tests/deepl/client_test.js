// mtserve's DeepL API through DeepL's published npm client `deepl-node` (1.28.0, pinned in
// package.json), pointed at mtserve with serverUrl: code nobody here wrote, calling /v2/translate,
// /v2/languages, /v2/usage, the v2 glossary routes and /v2/document as it would call DeepL. Its
// translations must equal mtserve's native /v1/translate answers for the same texts.
//
// Usage: node client_test.js PORT SENTENCE...   (NODE_PATH holds node_modules with the client)
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const deepl = require('deepl-node');
const { expect, run } = require('../test_lib/checks');

const port = process.argv[2];
const sentences = process.argv.slice(3);
const serverUrl = `http://127.0.0.1:${port}`;

async function native(texts, format) {
  const response = await fetch(`${serverUrl}/v1/translate`, {
    method: 'POST',
    body: JSON.stringify({ texts, options: { format: format === 'html' ? 'TEXT_FORMAT_HTML' : 'TEXT_FORMAT_PLAIN' } }),
  });
  const answer = await response.json();
  return answer.translations.map((t) => t.hypotheses[0].text);
}

// Each check on its own, so that one failing (a glossary's before the engine keeps terms) leaves
// the others' results.
async function check(name, body) {
  try {
    await body();
  } catch (error) {
    expect(name, false, `${error.stack || error}`);
  }
}

async function main() {
  if (sentences.length < 2) throw new Error('two sentences at least');
  // A server without keys takes any; the client needs one. No retries: an error is the answer.
  const translator = new deepl.Translator('mtserve-test-key', { serverUrl, maxRetries: 0 });
  const expected = await native(sentences, 'text');

  await check('translateText: one text, en->de', async () => {
    const result = await translator.translateText(sentences[0], 'en', 'de');
    expect('translateText: one text, en->de', result.text === expected[0],
           `client ${JSON.stringify(result.text)}, /v1/translate ${JSON.stringify(expected[0])}`);
    expect('translateText: detectedSourceLang', result.detectedSourceLang === 'en',
           `${result.detectedSourceLang}`);
  });

  await check('translateText: many texts, source detected', async () => {
    const results = await translator.translateText(sentences, null, 'de');
    const texts = results.map((r) => r.text);
    expect('translateText: many texts, source detected',
           JSON.stringify(texts) === JSON.stringify(expected),
           `client ${JSON.stringify(texts)}, /v1/translate ${JSON.stringify(expected)}`);
    expect('translateText: each detected as en', results.every((r) => r.detectedSourceLang === 'en'),
           results.map((r) => r.detectedSourceLang).join(','));
  });

  await check('translateText: tagHandling html', async () => {
    const html = `<p>${sentences[0]} <b>${sentences[1]}</b></p>`;
    const [htmlExpected] = await native([html], 'html');
    const result = await translator.translateText(html, 'en', 'de', { tagHandling: 'html' });
    expect('translateText: tagHandling html', result.text === htmlExpected && result.text.includes('<b>'),
           `client ${JSON.stringify(result.text)}, /v1/translate ${JSON.stringify(htmlExpected)}`);
  });

  await check('formality more refused', async () => {
    let refused = null;
    try {
      await translator.translateText(sentences[0], 'en', 'de', { formality: 'more' });
    } catch (error) {
      refused = error;
    }
    expect('formality more refused', refused instanceof deepl.DeepLError &&
           /formality/.test(refused.message), `${refused}`);
  });

  await check('getSourceLanguages, getTargetLanguages', async () => {
    const sources = await translator.getSourceLanguages();
    const targets = await translator.getTargetLanguages();
    expect('getSourceLanguages: English', sources.length === 1 && sources[0].code === 'en' &&
           sources[0].name === 'English', JSON.stringify(sources));
    expect('getTargetLanguages: German, without formality', targets.length === 1 &&
           targets[0].code === 'de' && targets[0].name === 'German' &&
           targets[0].supportsFormality === false, JSON.stringify(targets));
  });

  await check('getUsage', async () => {
    const usage = await translator.getUsage();
    expect('getUsage: characters, no limit reached', usage.character !== undefined &&
           usage.character.count === 0 && usage.character.limit > 0 && !usage.anyLimitReached(),
           JSON.stringify(usage));
  });

  await check('getGlossaryLanguagePairs', async () => {
    const pairs = await translator.getGlossaryLanguagePairs();
    expect('getGlossaryLanguagePairs: en->de', pairs.length === 1 && pairs[0].sourceLang === 'en' &&
           pairs[0].targetLang === 'de', JSON.stringify(pairs));
  });

  await check('glossaries', async () => {
    // "bike" is "Fahrrad" without the glossary (the sentence translated above); "Velo" with it.
    const entries = new deepl.GlossaryEntries({ entries: { bike: 'Velo' } });
    const glossary = await translator.createGlossary('bikes', 'en', 'de', entries);
    expect('createGlossary', typeof glossary.glossaryId === 'string' && glossary.name === 'bikes' &&
           glossary.entryCount === 1 && glossary.sourceLang === 'en' && glossary.targetLang === 'de' &&
           glossary.ready === true, JSON.stringify(glossary));
    const listed = await translator.listGlossaries();
    expect('listGlossaries holds it', listed.some((g) => g.glossaryId === glossary.glossaryId),
           JSON.stringify(listed));
    const got = await translator.getGlossaryEntries(glossary);
    expect('getGlossaryEntries', JSON.stringify(got.entries()) === JSON.stringify({ bike: 'Velo' }),
           JSON.stringify(got.entries()));
    await check('translateText with the glossary', async () => {
      const sentence = 'A man is riding a bike.';
      const [plain] = await native([sentence], 'text');
      const result = await translator.translateText(sentence, 'en', 'de', { glossary });
      expect('translateText with the glossary: Velo', result.text.includes('Velo') &&
             !plain.includes('Velo'), `with ${JSON.stringify(result.text)}, without ${JSON.stringify(plain)}`);
    });
    await translator.deleteGlossary(glossary);
    const after = await translator.listGlossaries();
    expect('deleteGlossary', !after.some((g) => g.glossaryId === glossary.glossaryId),
           JSON.stringify(after));
  });

  await check('translateDocument', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mtserve-deepl-'));
    try {
      const input = path.join(dir, 'notes.txt');
      const output = path.join(dir, 'notes.de.txt');
      const text = `${sentences[0]}\n\n${sentences[1]}\n`;
      fs.writeFileSync(input, text);
      const [want] = await native([text], 'text');
      await translator.translateDocument(input, output, 'en', 'de');
      const got = fs.readFileSync(output, 'utf8');
      expect('translateDocument: a .txt file as /v1/translate translates its text', got === want,
             `file ${JSON.stringify(got)}, /v1/translate ${JSON.stringify(want)}`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

run(main);
