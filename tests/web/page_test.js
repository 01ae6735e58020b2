// mtserve's translation page (GET /) in headless Chromium, driven by playwright-core: typed text is
// translated, and what the page shows must be what the JSON API answers for the same request
// (translation, alternatives, sentence ranges, error messages). The page asks for languages
// (source_language, target_language); the expected answers name the model instead, and the
// detected languages come from POST /v1/detect. Sentence ranges are turned into text here with
// Node's Buffer, independently of the page's own conversion.
//
// Usage: node page_test.js CONFIG_JSON, with CONFIG_JSON's fields:
//   url         the server's HTTP address (http://127.0.0.1:PORT), serving multi30k-en-de (the
//               default), multi30k-de-en and multi30k-fr-en with language detection
//   data        the directory of the Multi30k test sets (test_2016_flickr.{de,fr,cs})
//   chromium    the browser's executable
//   screenshots the directory to save screenshots into
//   pid         mtserve's process id: the last check sends it SIGTERM and it must be draining
//   keys_url    another mtserve's address, one started with --api_keys_file
//   key         the API key it accepts
//   max_file_bytes  the server's --max_file_bytes (the page must read it from GET /v1/models)
//   docx        a Word document (python-docx made it) for the File tab
//   doctype_docx the same with a DOCTYPE in its word/document.xml: taken, then its job fails
// NODE_PATH holds node_modules with playwright-core. Exit status 1 if a check fails.
'use strict';

const fs = require('fs');
const net = require('net');
const path = require('path');
const { chromium } = require('playwright-core');
const { expect, run } = require('../test_lib/checks');

const config = JSON.parse(process.argv[2]);

// The languages the test server serves, by their English names (what the page should show).
const NAMES = { de: 'German', en: 'English', fr: 'French', cs: 'Czech' };
// The second sentence of each test set: long enough to be detected surely.
const SENTENCES = Object.fromEntries(['de', 'fr', 'cs'].map((language) => [language,
  fs.readFileSync(path.join(config.data, `test_2016_flickr.${language}`), 'utf8')
    .split('\n')[1]]));

async function api(route, body, url = config.url, headers = {}) {
  const response = await fetch(url + route, body === undefined ? { headers } : {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

// The text of each {begin, end} byte range of `text` (UTF-8).
function slices(text, ranges) {
  const bytes = Buffer.from(text, 'utf8');
  return ranges.map((r) => bytes.subarray(r.begin, r.end).toString('utf8'));
}

async function screenshot(page, name) {
  const file = path.join(config.screenshots, name);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`screenshot: ${file}`);
}

// The page's request for `text` with these options, sent to the API directly.
function request(model, text, beam, alternatives, format = 'TEXT_FORMAT_PLAIN') {
  return {
    model,
    texts: [text],
    options: { beam_size: beam, num_hypotheses: alternatives + 1, format },
  };
}

async function waitForAnswer(page) {
  await page.waitForFunction(() => {
    const output = document.getElementById('translation');
    const error = document.getElementById('error');
    return output.getAttribute('aria-busy') === 'false' &&
        (output.textContent !== '' || !error.hidden);
  });
}

async function options(page, select) {
  return page.$$eval(`${select} option`, (o) => o.map((x) => [x.value, x.textContent]));
}

async function checkTranslation(page, models) {
  const model = models.models.find((m) => m.is_default);
  expect('the test server serves en->de (the default), de->en and fr->en',
         JSON.stringify(models.models.map((m) => [m.name, m.source_language, m.target_language,
                                                  !!m.is_default])) === JSON.stringify([
           ['multi30k-en-de', 'en', 'de', true], ['multi30k-de-en', 'de', 'en', false],
           ['multi30k-fr-en', 'fr', 'en', false]]),
         JSON.stringify(models.models));
  const chosen = [await page.inputValue('#source-language'),
                  await page.inputValue('#target-language')];
  expect('the pickers start at the default model\'s languages',
         chosen[0] === model.source_language && chosen[1] === model.target_language,
         JSON.stringify(chosen));
  const beams = await page.$$eval('#beam-size option', (o) => o.map((x) => x.value));
  expect('beam sizes 1 to the server\'s limit, 4 chosen',
         beams.length === models.limits.max_beam_size && beams[0] === '1' &&
             await page.inputValue('#beam-size') === '4',
         `${beams} ${await page.inputValue('#beam-size')}`);

  // Non-ASCII text: the ranges the server gives are UTF-8 byte offsets.
  const text = 'A man in a café is reading a newspaper. Two dogs – one black, one white – ' +
      'play in the snow. A woman sings on a stage.';
  await page.locator('#source').pressSequentially(text);
  const count = await page.textContent('#count');
  const bytes = Buffer.byteLength(text, 'utf8');
  expect('the live count gives characters and bytes against the limit',
         count.includes(`${[...text].length} characters (${bytes} bytes) of ` +
                        `${models.limits.max_text_bytes.toLocaleString('en')} bytes`),
         count);

  await page.selectOption('#alternatives', '2');
  // The keyboard shortcut, as a keyboard user translates.
  await page.focus('#source');
  await page.keyboard.press('Control+Enter');
  await waitForAnswer(page);

  const expected = await api('/v1/translate', request(model.name, text, 4, 2));
  const translation = expected.body.translations[0];
  const [best, ...others] = translation.hypotheses;
  const shown = await page.textContent('#translation');
  expect('the translation shown is the API\'s answer', shown === best.text,
         `page ${JSON.stringify(shown)}, API ${JSON.stringify(best.text)}`);
  const alternatives = await page.$$eval('#alternatives-list li', (l) => l.map((x) => x.textContent));
  expect('the alternatives shown are the API\'s next hypotheses',
         JSON.stringify(alternatives) === JSON.stringify(others.map((h) => h.text)),
         `page ${JSON.stringify(alternatives)}, API ${JSON.stringify(others.map((h) => h.text))}`);

  // Sentence by sentence: each translated sentence is a span; pointing at one marks its source.
  const sourceSentences = slices(text, translation.sentences);
  const targetSentences = slices(best.text, best.sentences);
  const spans = await page.$$eval('#translation .sentence', (s) => s.map((x) => x.textContent));
  expect('the translation is shown sentence by sentence, as the API\'s ranges cut it',
         sourceSentences.length === 3 && JSON.stringify(spans) === JSON.stringify(targetSentences),
         `page ${JSON.stringify(spans)}, API ${JSON.stringify(targetSentences)}`);
  for (let i = 0; i < spans.length; i++) {
    await page.hover(`#translation .sentence[data-index="${i}"]`);
    const marked = await page.textContent('#source-highlights mark');
    expect(`pointing at translated sentence ${i + 1} marks its source sentence`,
           marked === sourceSentences[i], `marked ${JSON.stringify(marked)}, want ` +
               JSON.stringify(sourceSentences[i]));
  }
  await screenshot(page, 'page-desktop.png');
  // With the keyboard: the cursor in the text marks the translation of its sentence.
  await page.mouse.move(0, 0);
  await page.focus('#source');
  await page.keyboard.press('Control+End');
  const active = await page.$$eval('#translation .sentence.active', (s) => s.map((x) => x.textContent));
  expect('the cursor at the end of the text marks the last translated sentence',
         active.length === 1 && active[0] === targetSentences[2], JSON.stringify(active));
  await page.keyboard.press('Control+Home');
  const first = await page.$$eval('#translation .sentence.active', (s) => s.map((x) => x.textContent));
  expect('the cursor at the start marks the first', first.length === 1 &&
             first[0] === targetSentences[0], JSON.stringify(first));

  await page.click('#copy');
  await page.waitForFunction(() => document.getElementById('copy-status').textContent !== '');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect('Copy puts the translation on the clipboard', copied === best.text &&
             await page.textContent('#copy-status') === 'Copied.',
         `${JSON.stringify(copied)} ${await page.textContent('#copy-status')}`);

  // Editing the text marks the translation as out of date.
  await page.focus('#source');
  await page.keyboard.type('X');
  expect('an edit after translating says the translation is out of date',
         await page.isVisible('#stale'), 'not shown');
  return model.name;
}

// The source picker: "Detect language", then every language a model reads, by name; the target
// picker: only the targets a chain of models reaches from the chosen source; swap only where the
// reverse is reached.
async function checkPickers(page) {
  const label = (code) => `${NAMES[code]} (${code})`;
  const sources = await options(page, '#source-language');
  expect('the source picker: Detect language, then the served sources by name',
         JSON.stringify(sources) === JSON.stringify([
           ['auto', 'Detect language'], ['en', label('en')], ['fr', label('fr')],
           ['de', label('de')]]),
         JSON.stringify(sources));
  // French reaches German through English (pivot translation).
  const reachable = { auto: ['en', 'de'], en: ['de'], fr: ['en', 'de'], de: ['en'] };
  const swappable = { auto: false, en: true, fr: false, de: true };
  for (const [source, targets] of Object.entries(reachable)) {
    await page.selectOption('#source-language', source);
    const shown = await options(page, '#target-language');
    expect(`from ${source}: the target picker lists only ${targets}`,
           JSON.stringify(shown) === JSON.stringify(targets.map((t) => [t, label(t)])),
           JSON.stringify(shown));
    const disabled = await page.$eval('#swap', (b) => b.disabled);
    expect(`from ${source} into ${targets[0]}: swap ${swappable[source] ? 'on' : 'off'}`,
           disabled === !swappable[source], `disabled: ${disabled}`);
  }
}

// The page's request, for the API: beam 4, no alternatives, plain text.
async function translateOnPage(page, source, target, text) {
  await page.selectOption('#source-language', source);
  await page.selectOption('#target-language', target);
  await page.selectOption('#alternatives', '0');
  await page.fill('#source', text);
  await page.click('#translate');
  await waitForAnswer(page);
}

// "Detect language" into English: the text goes to the model of its language, and the page says
// which language was detected with the detector's confidence (from POST /v1/detect).
async function checkDetected(page, language, model) {
  const text = SENTENCES[language];
  await translateOnPage(page, 'auto', 'en', text);
  const expected = await api('/v1/translate', request(model, text, 4, 0));
  const detection = await api('/v1/detect', { texts: [text], target: 'en', max_results: 1 });
  const best = detection.body.detections[0].languages[0];
  expect(`/v1/detect takes the ${NAMES[language]} sentence for ${language}, surely`,
         best.language === language && best.confidence >= 50, JSON.stringify(best));
  const shown = await page.textContent('#translation');
  expect(`a ${NAMES[language]} sentence with Detect language: ${model}'s translation`,
         expected.status === 200 && shown === expected.body.translations[0].hypotheses[0].text,
         `page ${JSON.stringify(shown)}, API ${JSON.stringify(expected.body)}`);
  const detected = (await page.textContent('#detected')).replace(/\u00a0/g, ' ');
  const want = `Detected: ${NAMES[language]} (${Math.round(best.confidence)} %)`;
  expect(`the page says ${want}`, await page.isVisible('#detected') && detected === want &&
             await page.isHidden('#error'), JSON.stringify(detected));
}

// A word the detector is unsure of: the page says how unsure, and how to overrule it.
async function checkUnsure(page) {
  const text = 'Foto';
  await translateOnPage(page, 'auto', 'en', text);
  const detection = await api('/v1/detect', { texts: [text], target: 'en', max_results: 1 });
  const best = detection.body.detections[0].languages[0];
  expect('/v1/detect: "Foto" is German at less than 50 %',
         best.language === 'de' && best.confidence < 50, JSON.stringify(best));
  const expected = await api('/v1/translate', request('multi30k-de-en', text, 4, 0));
  const detected = (await page.textContent('#detected')).replace(/\u00a0/g, ' ');
  expect('unsure: multi30k-de-en\'s translation, and the page says it is only so sure',
         await page.textContent('#translation') ===
             expected.body.translations[0].hypotheses[0].text &&
             detected.startsWith(`Detected: German, but only ${Math.round(best.confidence)} % ` +
                                 'sure.') && detected.includes('choose'),
         JSON.stringify(detected));
}

// An explicit source: German into English by multi30k-de-en, nothing detected; swapped, the
// translation is the text and goes back into German by multi30k-en-de.
async function checkExplicitSource(page) {
  const text = SENTENCES.de;
  await translateOnPage(page, 'de', 'en', text);
  const expected = await api('/v1/translate', request('multi30k-de-en', text, 4, 0));
  const english = expected.body.translations[0].hypotheses[0].text;
  const shown = await page.textContent('#translation');
  expect('source German chosen: multi30k-de-en\'s translation, no detection shown',
         shown === english && await page.isHidden('#detected') && await page.isHidden('#error'),
         `page ${JSON.stringify(shown)}, API ${JSON.stringify(english)}`);
  expect('the pane titles name the languages',
         await page.textContent('#source-label') === 'Text in German' &&
             await page.textContent('#target-label') === 'Translation into English',
         `${await page.textContent('#source-label')} / ${await page.textContent('#target-label')}`);
  await page.click('#swap');
  const swapped = [await page.inputValue('#source-language'),
                   await page.inputValue('#target-language'), await page.inputValue('#source')];
  expect('swap: English into German, the translation is now the text',
         JSON.stringify(swapped) === JSON.stringify(['en', 'de', english]) &&
             await page.textContent('#translation') === '',
         JSON.stringify(swapped));
  await page.click('#translate');
  await waitForAnswer(page);
  const back = await api('/v1/translate', request('multi30k-en-de', english, 4, 0));
  expect('swapped: translated back by multi30k-en-de',
         await page.textContent('#translation') === back.body.translations[0].hypotheses[0].text,
         `page ${JSON.stringify(await page.textContent('#translation'))}, API ` +
             JSON.stringify(back.body));
}

// A Czech sentence with Detect language into English: no model reads Czech, so this text gets
// its own error (the request succeeds), shown in the page's error style and naming Czech.
async function checkNotServed(page) {
  const text = SENTENCES.cs;
  await translateOnPage(page, 'auto', 'en', text);
  const detection = await api('/v1/detect',
                              { texts: [text], all_languages: true, max_results: 1 });
  const best = detection.body.detections[0].languages[0];
  expect('/v1/detect, every language: the Czech sentence is cs, surely',
         best.language === 'cs' && best.confidence >= 50, JSON.stringify(best));
  const answer = await api('/v1/translate',
                           { source_language: 'auto', target_language: 'en', texts: [text] });
  const error = answer.body.translations && answer.body.translations[0].error;
  expect('the API: 200, the text not translated, with its own error',
         answer.status === 200 && error && error.message.includes('cs'),
         JSON.stringify(answer.body));
  const shown = await page.textContent('#error');
  expect('the page shows the error, naming Czech (cs), with the server\'s message',
         await page.isVisible('#error') && shown.includes('Czech (cs)') &&
             error && shown.includes(error.message) &&
             await page.getAttribute('#error', 'class') === 'error',
         JSON.stringify(shown));
  const detected = (await page.textContent('#detected')).replace(/\u00a0/g, ' ');
  expect('no translation, Copy off, and the detected language said',
         await page.textContent('#translation') === '' &&
             await page.$eval('#copy', (b) => b.disabled) &&
             detected === `Detected: Czech (${Math.round(best.confidence)} %)`,
         JSON.stringify(detected));
}

async function checkLimitError(page, models, model) {
  const text = 'A dog runs. '.repeat(Math.ceil(models.limits.max_text_bytes / 12) + 1);
  await page.fill('#source', text);
  const count = await page.locator('#count');
  expect('over the limit, the count says so',
         (await count.getAttribute('class')).includes('over') &&
             (await count.textContent()).includes('over the limit of'),
         await count.textContent());
  await page.click('#translate');
  await waitForAnswer(page);
  const expected = await api('/v1/translate', request(model, text, 4, 0));
  const error = await page.textContent('#error');
  expect('the page shows the API\'s error for a text over the limit',
         expected.status === 400 && await page.isVisible('#error') &&
             error.includes(expected.body.message) && error.includes('max_text_bytes'),
         `page ${JSON.stringify(error)}, API ${expected.status} ${JSON.stringify(expected.body)}`);
  await screenshot(page, 'page-error.png');
}

// The format picker: its choices are the API's TextFormat values, each with a label; a Markdown
// text comes back as POST /v1/translate's answer with that format, and an HTML text's translation
// is shown as text (its tags visible), never rendered.
async function checkFormats(page, model) {
  await page.selectOption('#source-language', 'en');
  await page.selectOption('#target-language', 'de');
  await page.selectOption('#alternatives', '0');
  const formats = await options(page, '#format');
  expect('the format picker: plain text, HTML, Markdown, SubRip, WebVTT, as TextFormat values',
         JSON.stringify(formats.map(([value]) => value)) === JSON.stringify([
           'TEXT_FORMAT_PLAIN', 'TEXT_FORMAT_HTML', 'TEXT_FORMAT_MARKDOWN', 'TEXT_FORMAT_SRT',
           'TEXT_FORMAT_VTT']) &&
             await page.locator('label', { has: page.locator('#format') }).count() === 1 &&
             (await page.getByLabel('Format').getAttribute('id')) === 'format',
         JSON.stringify(formats));
  const markdown = '# A day in the park\n\nA man in a **red** shirt is reading a newspaper. ' +
      'Two dogs play in the [snow](https://example.com/snow).\n\n- A woman sings.\n- A child ' +
      'runs.\n';
  await page.selectOption('#format', 'TEXT_FORMAT_MARKDOWN');
  await page.fill('#source', markdown);
  await page.click('#translate');
  await waitForAnswer(page);
  const expected = await api('/v1/translate',
                             request(model, markdown, 4, 0, 'TEXT_FORMAT_MARKDOWN'));
  const text = expected.body.translations && expected.body.translations[0].hypotheses[0].text;
  const shown = await page.textContent('#translation');
  expect('Markdown: the translation shown is the API\'s with format markdown, syntax kept',
         expected.status === 200 && shown === text && text.startsWith('# ') &&
             text.includes('](https://example.com/snow)') && text.includes('\n- '),
         `page ${JSON.stringify(shown)}, API ${expected.status} ${JSON.stringify(expected.body)}`);

  const html = '<p>A man in a <b>red</b> shirt is reading a newspaper.</p>';
  await page.selectOption('#format', 'TEXT_FORMAT_HTML');
  await page.fill('#source', html);
  await page.click('#translate');
  await waitForAnswer(page);
  const fromApi = await api('/v1/translate', request(model, html, 4, 0, 'TEXT_FORMAT_HTML'));
  const htmlText = fromApi.body.translations[0].hypotheses[0].text;
  const elements = await page.$$eval('#translation *:not(.sentence)', (e) => e.length);
  expect('HTML: the translation is the API\'s, shown as text with its tags, not rendered',
         await page.textContent('#translation') === htmlText && htmlText.includes('<b>') &&
             elements === 0,
         `page ${JSON.stringify(await page.textContent('#translation'))}, elements ${elements}, ` +
             `API ${JSON.stringify(htmlText)}`);
  await page.selectOption('#format', 'TEXT_FORMAT_PLAIN');
}

// A file's multipart upload to POST /v1/translate_file, as a client other than the page sends it.
async function uploadFile(name, type, content, fields) {
  const form = new FormData();
  form.append('file', new Blob([content], { type }), name);
  for (const [key, value] of Object.entries(fields)) form.append(key, value);
  const response = await fetch(config.url + '/v1/translate_file', { method: 'POST', body: form });
  return { status: response.status, body: await response.json() };
}

async function chooseOnPage(page, name, type, content) {
  await page.setInputFiles('#file', { name, mimeType: type, buffer: Buffer.from(content, 'utf8') });
}

// The file dropped on the drop zone, as a drag from the desktop would (a drop event whose
// DataTransfer holds it).
async function dropOnPage(page, name, type, content) {
  const dataTransfer = await page.evaluateHandle(([n, t, c]) => {
    const transfer = new DataTransfer();
    transfer.items.add(new File([c], n, { type: t }));
    return transfer;
  }, [name, type, content]);
  await page.dispatchEvent('#drop-zone', 'dragover', { dataTransfer });
  await page.dispatchEvent('#drop-zone', 'drop', { dataTransfer });
}

// The file tab: a file chosen with the file input is translated (English into German, the
// page's languages), the progress bar ends at the job's sentences, and the file downloaded is
// the API's translation of the same text with the file's format.
async function checkFile(page, name, type, format, content, choose = chooseOnPage) {
  await choose(page, name, type, content);
  expect(`${name}: chosen, with its name and size`,
         (await page.textContent('#file-chosen')).startsWith(`${name}: `) &&
             !(await page.$eval('#translate-file', (b) => b.disabled)),
         await page.textContent('#file-chosen'));
  await page.click('#translate-file');
  const bar = page.locator('#file-progress');
  await page.waitForFunction(() => {
    const error = document.getElementById('error');
    return !document.getElementById('download').hidden || !error.hidden;
  }, null, { timeout: 120000 });
  const values = await bar.evaluate((b) => ({
    now: b.getAttribute('aria-valuenow'), max: b.getAttribute('aria-valuemax'),
    min: b.getAttribute('aria-valuemin'), text: b.getAttribute('aria-valuetext'),
    role: b.getAttribute('role'), label: b.getAttribute('aria-label'),
  }));
  const href = await page.getAttribute('#download', 'href');
  const id = href ? decodeURIComponent(href.split('/')[3]) : '';
  const record = (await api(`/v1/jobs/${encodeURIComponent(id)}`)).body;
  expect(`${name}: the progress bar is at its end, at the job's sentence count`,
         await page.isHidden('#error') && values.role === 'progressbar' && values.label &&
             values.min === '0' && values.max === String(record.sentences_total) &&
             values.now === values.max && Number(values.max) >= 2 &&
             record.state === 'FILE_JOB_STATE_DONE',
         `${JSON.stringify(values)} job ${JSON.stringify(record)} error ` +
             JSON.stringify(await page.textContent('#error')));
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const bytes = fs.readFileSync(await download.path());
  const expected = await api('/v1/translate', {
    source_language: 'en', target_language: 'de', texts: [content],
    options: { beam_size: 4, format } });
  const text = expected.body.translations && expected.body.translations[0].hypotheses[0].text;
  expect(`${name}: the downloaded file is the API's translation of its text as ${format}`,
         expected.status === 200 && bytes.equals(Buffer.from(text, 'utf8')),
         `downloaded ${JSON.stringify(bytes.toString('utf8'))}, API ${expected.status} ` +
             JSON.stringify(expected.body));
  expect(`${name}: downloaded under the job's file name`,
         download.suggestedFilename() === record.file_name &&
             path.extname(record.file_name) === path.extname(name),
         `${download.suggestedFilename()} job ${record.file_name}`);
}

// An office document (a Word file python-docx made for this test: config.docx): the page takes it
// (its extension is among the accepted ones), uploads it as bytes, and the file downloaded is a
// .docx, the same bytes as the file API gives the same file with the page's languages and beam.
async function checkOfficeFile(page) {
  const name = path.basename(config.docx);
  await page.setInputFiles('#file', config.docx);
  expect(`${name}: chosen, named a Word document`,
         (await page.textContent('#file-chosen')).includes('Word document') &&
             !(await page.$eval('#translate-file', (b) => b.disabled)),
         await page.textContent('#file-chosen'));
  await page.click('#translate-file');
  await page.waitForFunction(() => {
    const error = document.getElementById('error');
    return !document.getElementById('download').hidden || !error.hidden;
  }, null, { timeout: 120000 });
  expect(`${name}: translated`, await page.isHidden('#error'),
         JSON.stringify(await page.textContent('#error')));
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
  const bytes = fs.readFileSync(await download.path());
  const form = new FormData();
  form.append('file', new Blob([fs.readFileSync(config.docx)]), name);
  form.append('source_language', 'en');
  form.append('target_language', 'de');
  form.append('options', JSON.stringify({ beam_size: 4 }));
  const submitted = await (await fetch(config.url + '/v1/translate_file',
                                       { method: 'POST', body: form })).json();
  let record = submitted;
  for (let i = 0; i < 1200 && !['FILE_JOB_STATE_DONE', 'FILE_JOB_STATE_FAILED'].includes(
      record.state); ++i) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    record = (await api(`/v1/jobs/${encodeURIComponent(submitted.id)}`)).body;
  }
  const expected = record.result_url
      ? Buffer.from(await (await fetch(config.url + record.result_url)).arrayBuffer())
      : Buffer.alloc(0);
  expect(`${name}: the download is a .docx, the file API's translation of the same file`,
         download.suggestedFilename() === name && bytes.subarray(0, 4).toString('latin1') ===
             'PK\x03\x04' && bytes.equals(expected),
         `${download.suggestedFilename()}, ${bytes.length} bytes; API job ` +
             JSON.stringify(record));
}

// A file the server takes (a Word document by its entries) whose job then fails (its
// word/document.xml has a DOCTYPE, refused once the part is read): the page shows the job's error,
// naming the part, and offers no download.
async function checkFailedJob(page) {
  await page.setInputFiles('#file', config.doctype_docx);
  await page.click('#translate-file');
  await page.waitForFunction(() => !document.getElementById('error').hidden ||
      !document.getElementById('download').hidden, null, { timeout: 120000 });
  const error = (await page.textContent('#error')) || '';
  expect('a job that fails after its upload: the page shows its error, naming the part',
         await page.isVisible('#error') && error.includes('word/document.xml') &&
             error.includes('DOCTYPE') && await page.isHidden('#download') &&
             (await page.textContent('#file-status')) === 'Not translated.',
         `error ${JSON.stringify(error)}, status ` +
             JSON.stringify(await page.textContent('#file-status')));
}

// Cancel: the answer to the page's upload is held (the server has made the job) until Cancel has
// been clicked, so that the job is the page's current one whatever the translation's speed; once
// the answer arrives the page sends DELETE /v1/jobs/{id}, and the server no longer knows the job.
async function checkCancel(page, content) {
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  let made;
  const submitted = new Promise((resolve) => { made = resolve; });
  const upload = '**/v1/translate_file';
  await page.route(upload, async (route) => {
    const response = await route.fetch();
    const body = await response.text();
    made(JSON.parse(body));
    await held;
    await route.fulfill({ response, body });
  });
  await chooseOnPage(page, 'cancel.srt', 'application/x-subrip', content);
  await page.click('#translate-file');
  const job = await submitted;
  const deleted = page.waitForRequest((r) => r.method() === 'DELETE' &&
                                          r.url().endsWith(`/v1/jobs/${job.id}`));
  await page.click('#cancel-file');
  release();
  const answer = await (await deleted).response();
  await page.unroute(upload);
  const after = await fetch(`${config.url}/v1/jobs/${job.id}`);
  expect('Cancel sends DELETE for the job; the server answers 200 and then no longer knows it',
         answer.status() === 200 && after.status === 404 &&
             (await page.textContent('#file-status')) === 'Cancelled.' &&
             await page.isHidden('#download') && await page.isHidden('#cancel-file') &&
             await page.isHidden('#file-progress') &&
             !(await page.$eval('#translate-file', (b) => b.disabled)),
         `DELETE ${answer.status()}, then GET ${after.status}, status ` +
             JSON.stringify(await page.textContent('#file-status')));
}

async function checkFileTab(page, models) {
  await page.click('#file-tab');
  expect('the File tab shows the drop zone and hides the text, the format picker and the ' +
             'hint about sentences',
         await page.isVisible('#drop-zone') && await page.isHidden('#source') &&
             await page.isHidden('#format') && await page.isHidden('#sentence-hint') &&
             await page.getAttribute('#file-tab', 'aria-selected') === 'true',
         'not so');
  const limit = Number(models.limits.max_file_bytes);
  expect('GET /v1/models gives the server\'s file limit', limit === config.max_file_bytes,
         JSON.stringify(models.limits));
  const settings = (await api('/frontend/settings')).body;
  await page.waitForFunction(() => document.getElementById('file-help').textContent
      .includes('.srt'));
  const help = await page.textContent('#file-help');
  expect('the drop zone says the formats /frontend/settings lists and the limit',
         settings.filesTranslation === true &&
             settings.supportedFilesFormat.every((e) => help.includes(e)) &&
             help.includes(`${limit.toLocaleString('en')} bytes`) &&
             await page.getAttribute('#file', 'accept') === settings.supportedFilesFormat.join(','),
         `${help} ${JSON.stringify(settings)}`);
  await page.selectOption('#source-language', 'en');
  await page.selectOption('#target-language', 'de');

  const uploads = [];
  page.on('request', (r) => { if (r.url().endsWith('/v1/translate_file')) uploads.push(r); });
  const srt = `1\n00:00:01,000 --> 00:00:03,500\n${'A man in a café is reading a newspaper.'}\n\n` +
      '2\n00:00:04,000 --> 00:00:06,000\nTwo dogs play in the snow.\n\n' +
      '3\n00:00:06,500 --> 00:00:08,000\nA woman sings on a stage.\n';
  await checkFile(page, 'street.srt', 'application/x-subrip', 'TEXT_FORMAT_SRT', srt);
  await screenshot(page, 'page-file.png');
  const md = '# At the lake\n\nA little girl climbs into a wooden playhouse. A dog runs on the ' +
      '*beach*.\n\n1. A man rides a bike.\n2. Two children swim.\n';
  await checkFile(page, 'lake.md', 'text/markdown', 'TEXT_FORMAT_MARKDOWN', md);
  const vtt = 'WEBVTT\n\n00:00.000 --> 00:02.000\nA boy jumps into the water.\n\n' +
      '00:02.500 --> 00:04.000\nThree people sit on a bench.\n';
  await checkFile(page, 'beach.vtt', 'text/vtt', 'TEXT_FORMAT_VTT', vtt, dropOnPage);
  await checkOfficeFile(page);
  await checkFailedJob(page);
  await checkCancel(page, srt);
  const sent = uploads.length;

  // Over the limit: refused on the page, nothing sent.
  await chooseOnPage(page, 'big.txt', 'text/plain', 'A dog runs. '.repeat(limit / 12 + 1));
  const tooBig = await page.textContent('#error');
  expect('a file over the limit is refused on the page, naming the limit, and not sent',
         await page.isVisible('#error') && tooBig.includes('too large') &&
             tooBig.includes(`${limit.toLocaleString('en')} bytes`) &&
             await page.$eval('#translate-file', (b) => b.disabled) && uploads.length === sent,
         `${JSON.stringify(tooBig)} uploads ${uploads.length - sent}`);
  // A format the server does not take: refused on the page, naming those it takes.
  await chooseOnPage(page, 'photo.png', 'image/png', 'not a picture');
  const unsupported = await page.textContent('#error');
  expect('a file of a format the server does not take is refused on the page, naming them',
         await page.isVisible('#error') && unsupported.includes('photo.png') &&
             unsupported.includes('.srt') && unsupported.includes('.md') &&
             await page.$eval('#translate-file', (b) => b.disabled) && uploads.length === sent,
         JSON.stringify(unsupported));

  // A name that its content contradicts: the server's error, as the API gives it.
  const notSubtitles = '# Notes\n\nA dog runs in the park.\n';
  await chooseOnPage(page, 'notes.srt', 'application/x-subrip', notSubtitles);
  await page.click('#translate-file');
  await page.waitForFunction(() => !document.getElementById('error').hidden);
  const refused = await uploadFile('notes.srt', 'application/x-subrip', notSubtitles,
                                   { source_language: 'en', target_language: 'de' });
  const error = await page.textContent('#error');
  expect('a .srt file that holds no subtitles: the page shows the server\'s 400 and message',
         refused.status === 400 && typeof refused.body.message === 'string' &&
             refused.body.message.includes('notes.srt') && error.includes(refused.body.message) &&
             await page.isHidden('#download'),
         `page ${JSON.stringify(error)}, API ${refused.status} ${JSON.stringify(refused.body)}`);
  await page.click('#text-tab');
  expect('the Text tab shows the hint about sentences again',
         await page.isVisible('#sentence-hint') && await page.isVisible('#source'), 'not so');
}

async function checkPhone(browser, models) {
  const context = await browser.newContext({ viewport: { width: 390, height: 844 },
                                             isMobile: true, hasTouch: true });
  const page = await context.newPage();
  await page.goto(config.url + '/');
  await page.waitForSelector('#controls:not([disabled])');
  await page.fill('#source', 'A little girl climbs into a wooden playhouse. A dog runs.');
  await page.tap('#translate');
  await waitForAnswer(page);
  const layout = await page.evaluate(() => {
    const source = document.getElementById('source').getBoundingClientRect();
    const output = document.getElementById('translation').getBoundingClientRect();
    return { scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
             stacked: output.top >= source.bottom, outputWidth: output.width };
  });
  expect('on a phone: no sideways scrolling, translation below the text, full width',
         layout.scrollWidth <= layout.width && layout.stacked && layout.outputWidth > 300,
         JSON.stringify(layout));
  expect('on a phone: translated', (await page.textContent('#translation')).length > 0, 'empty');
  await screenshot(page, 'page-phone.png');
  await page.tap('#file-tab');
  await page.setInputFiles('#file', config.docx);
  const fileLayout = await page.evaluate(() => {
    const zone = document.getElementById('drop-zone').getBoundingClientRect();
    const button = document.getElementById('translate-file').getBoundingClientRect();
    return { scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
             zoneLeft: zone.left, zoneRight: zone.right, buttonRight: button.right };
  });
  expect('on a phone, the File tab: no sideways scrolling, the drop zone and button within it',
         fileLayout.scrollWidth <= fileLayout.width && fileLayout.zoneLeft >= 0 &&
             fileLayout.zoneRight <= fileLayout.width &&
             fileLayout.buttonRight <= fileLayout.width &&
             await page.isVisible('#translate-file'),
         JSON.stringify(fileLayout));
  await screenshot(page, 'page-phone-file.png');
  await context.close();
}

// A server that wants API keys: the page asks for one, says when it is refused, and sends it.
async function checkApiKey(browser) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(config.keys_url + '/');
  await page.waitForSelector('#key-form:not([hidden])');
  expect('a server that wants a key: the page asks for one',
         (await page.textContent('#server-status')) === 'This server asks for an API key.' &&
             await page.$eval('#controls', (f) => f.disabled),
         await page.textContent('#server-status'));
  await page.fill('#api-key', 'not-the-key');
  await page.press('#api-key', 'Enter');
  const refused = await page.waitForFunction(
      () => document.getElementById('server-status').textContent ===
          'The server did not accept this API key.', null, { timeout: 10000 })
      .then(() => true, () => false);
  expect('a wrong key: the page says it was not accepted', refused,
         await page.textContent('#server-status'));
  await page.fill('#api-key', config.key);
  await page.click('#key-form button');
  await page.waitForSelector('#controls:not([disabled])');
  await page.fill('#source', 'A dog runs in the park.');
  await page.click('#translate');
  await waitForAnswer(page);
  const model = (await api('/v1/models', undefined, config.keys_url,
                            { Authorization: `Bearer ${config.key}` })).body.models[0].name;
  const expected = await api('/v1/translate', request(model, 'A dog runs in the park.', 4, 0),
                             config.keys_url, { Authorization: `Bearer ${config.key}` });
  const shown = await page.textContent('#translation');
  expect('with the key: the key form goes, and the translation is the API\'s',
         await page.isHidden('#key-form') && expected.status === 200 &&
             shown === expected.body.translations[0].hypotheses[0].text,
         `page ${JSON.stringify(shown)}, API ${expected.status} ${JSON.stringify(expected.body)}`);
  await context.close();
}

// A request that stays in flight until `finish` is called: its headers ask for 100-continue, so
// the server has counted it once it answers that, and it waits for the body.
async function requestInFlight(port, body) {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk) => { received += chunk.toString('utf8'); });
  socket.write('POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
               'Content-Type: application/json\r\nExpect: 100-continue\r\n' +
               `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`);
  while (!received.includes('100 Continue')) await new Promise((r) => setTimeout(r, 20));
  return {
    finish: async () => {
      socket.write(body);
      const ended = new Promise((r) => socket.on('close', r));
      await ended;
      return received;
    },
  };
}

async function checkDraining(page) {
  const port = Number(new URL(config.url).port);
  const held = await requestInFlight(port, JSON.stringify({ texts: ['A dog runs.'] }));
  process.kill(config.pid, 'SIGTERM');
  for (;;) {
    const ready = await fetch(config.url + '/readyz');
    if (ready.status === 503) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const expected = await api('/v1/translate', { texts: ['A dog runs.'] });
  await page.fill('#source', 'A dog runs.');
  await page.click('#translate');
  await waitForAnswer(page);
  const error = await page.textContent('#error');
  expect('draining: the page says the server is not serving, with the API\'s message',
         expected.status === 503 && error.includes('not serving right now') &&
             error.includes(expected.body.message),
         `page ${JSON.stringify(error)}, API ${expected.status} ${JSON.stringify(expected.body)}`);
  // Its body comes after the drain began: like a gRPC stream's texts read then, it is refused
  // (to be sent to another server), but answered, and the server waited for it.
  const answer = await held.finish();
  expect('draining: a request still sending its body is answered (503, as work arriving now is)',
         /HTTP\/1.1 503/.test(answer) && answer.includes(expected.body.message),
         answer.slice(0, 300));
}

async function main() {
  const browser = await chromium.launch({ executablePath: config.chromium, headless: true });
  try {
    const models = (await api('/v1/models')).body;
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: config.url });
    const page = await context.newPage();
    const problems = [];
    page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('requestfailed', (r) => problems.push(`${r.url()}: ${r.failure().errorText}`));
    const loaded = await page.goto(config.url + '/');
    expect('GET / is the page', loaded.status() === 200 &&
               (await page.title()).includes('mtserve'), `${loaded.status()}`);
    await page.waitForSelector('#controls:not([disabled])');
    expect('the page says the server serves', (await page.textContent('#server-status')) ===
               'Serving 3 models.', await page.textContent('#server-status'));
    const model = await checkTranslation(page, models);
    await checkLimitError(page, models, model);
    await checkPickers(page);
    await checkDetected(page, 'fr', 'multi30k-fr-en');
    await checkDetected(page, 'de', 'multi30k-de-en');
    await screenshot(page, 'page-detected.png');
    await checkUnsure(page);
    await checkExplicitSource(page);
    await checkNotServed(page);
    await screenshot(page, 'page-not-served.png');
    await checkFormats(page, model);
    await checkFileTab(page, models);
    await checkPhone(browser, models);
    await checkApiKey(browser);
    // Errors the page causes itself are expected console messages from here on: none before.
    const serverErrors = problems.filter((p) => !p.includes('status of 400'));
    expect('no script error, refused resource or failed request', serverErrors.length === 0,
           JSON.stringify(serverErrors));
    await checkDraining(page);
  } finally {
    await browser.close();
  }
}

run(main);
