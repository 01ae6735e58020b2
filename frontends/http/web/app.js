// mtserve's translation page: calls the server's JSON API (GET /v1/models, POST /v1/translate)
// and shows the translation sentence by sentence, from the sentence ranges the server returns.
// The user picks languages, not models: the server routes each text to the model that reads its
// source language (given, or detected with "Detect language") into the target.
// The server checks every limit; the page only counts against them as the user types.
'use strict';

const $ = (id) => document.getElementById(id);
const ui = {
  status: $('server-status'),
  form: $('translate-form'),
  controls: $('controls'),
  sourceLanguage: $('source-language'),
  targetLanguage: $('target-language'),
  swap: $('swap'),
  detected: $('detected'),
  beamSize: $('beam-size'),
  alternatives: $('alternatives'),
  html: $('html'),
  sourceLabel: $('source-label'),
  source: $('source'),
  highlights: $('source-highlights'),
  count: $('count'),
  translate: $('translate'),
  translation: $('translation'),
  stale: $('stale'),
  copy: $('copy'),
  copyStatus: $('copy-status'),
  alternativesSection: $('alternatives-section'),
  alternativesList: $('alternatives-list'),
  error: $('error'),
  keyForm: $('key-form'),
  key: $('api-key'),
};

const REQUEST_TIMEOUT = '60s';  // X-Request-Timeout: the server gives up after it.
// A server started with --api_keys_file wants a key with every call: the user gives it once, and
// it stays in this tab's session storage (not shared with other tabs, gone when the tab closes).
const KEY_STORAGE = 'mtserve-api-key';
const DEFAULT_BEAM_SIZE = 4;
const utf8 = new TextEncoder();
const AUTO = 'auto';  // source_language: detect each text's language.
// Below this confidence (percent) a detected language is shown as a guess.
const LOW_CONFIDENCE = 50;
// Language names in English, as the rest of the page.
const languageNames = (() => {
  try {
    return new Intl.DisplayNames(['en'], {type: 'language', fallback: 'none'});
  } catch (e) {
    return null;
  }
})();

let limits = null;  // ListModelsResponse.limits
let models = [];    // ListModelsResponse.models
let pairs = [];     // [{source, target}] of the models that say their languages.
// The last translation shown: the source text it was made from, the sentences of that text and
// of the translation (string index ranges, pairwise), or null.
let shown = null;
let busy = false;

function languageName(code) {
  if (!code) return '';
  try {
    return (languageNames && languageNames.of(code)) || code;
  } catch (e) {
    return code;  // Not a code the browser knows ("pt_BR").
  }
}

// "French (fr)", or the code alone where the browser has no name for it.
function languageLabel(code) {
  const name = languageName(code);
  return name === code ? code : `${name} (${code})`;
}

function byName(codes) {
  return [...new Set(codes)].sort((a, b) => languageName(a).localeCompare(languageName(b)));
}

function number(n) {
  return n.toLocaleString('en');
}

// Where each UTF-8 byte offset of `text` falls in its UTF-16 string: byte offset -> index, for
// the offsets at which a character starts (and the end).
function byteToIndex(text) {
  const map = new Map();
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    map.set(bytes, i);
    const code = text.codePointAt(i);
    if (code > 0xffff) {
      bytes += 4;
      i++;
    } else {
      bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    }
  }
  map.set(bytes, text.length);
  return map;
}

// The server's byte ranges ({begin, end}) as string index ranges, or null if one does not fall
// on character boundaries.
function stringRanges(text, ranges) {
  const map = byteToIndex(text);
  const result = [];
  for (const range of ranges || []) {
    const begin = map.get(range.begin);
    const end = map.get(range.end);
    if (begin === undefined || end === undefined || end < begin) return null;
    result.push([begin, end]);
  }
  return result;
}

function showError(message) {
  ui.error.textContent = message;
  ui.error.hidden = false;
}

function clearError() {
  ui.error.hidden = true;
  ui.error.textContent = '';
}

// What an error answer of the API means to the user, with the server's own message.
function describeError(status, body) {
  const message = body && typeof body.message === 'string' ? body.message : '';
  const lead = {
    400: 'The server cannot translate this',
    401: 'The server asks for a valid API key',
    404: 'Not found',
    408: 'The request took too long to arrive',
    413: 'The text is too large for one request',
    429: 'The server is busy; try again in a moment',
    499: 'The translation was cancelled',
    503: 'The server is not serving right now (loading its models or shutting down)',
    504: 'The translation took too long',
  }[status] || `The server answered ${status}`;
  return message ? `${lead}: ${message}` : `${lead}.`;
}

function apiKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) || '';
  } catch (e) {
    return ui.key.value;  // Storage refused (private modes): the field itself.
  }
}

function askForKey(message) {
  ui.keyForm.hidden = false;
  ui.status.textContent = message;
  ui.key.focus();
}

async function callApi(path, init = {}) {
  const headers = {...(init.headers || {})};
  if (apiKey()) headers.Authorization = `Bearer ${apiKey()}`;
  let response;
  try {
    response = await fetch(path, {...init, headers});
  } catch (e) {
    throw new Error(`Cannot reach the server: ${e.message}`);
  }
  let body = null;
  try {
    body = await response.json();
  } catch (e) {
    // Left null: described by the status alone.
  }
  if (response.status === 401) {
    askForKey(apiKey() ? 'The server did not accept this API key.' :
                         'This server asks for an API key.');
  }
  if (!response.ok) {
    const error = new Error(describeError(response.status, body));
    error.status = response.status;
    throw error;
  }
  return body;
}

function fillSelect(select, values, selected, label) {
  select.replaceChildren(...values.map((value) => {
    const option = new Option(label ? label(value) : String(value), String(value));
    option.selected = value === selected;
    return option;
  }));
}

// The languages a chain of models takes `source` into: a model's pair, or several through bridge
// languages, which the server pivots through (docs/api.md, "Pivot translation").
function reachable(source) {
  const found = new Set();
  const todo = [source];
  while (todo.length > 0) {
    const from = todo.pop();
    for (const p of pairs) {
      if (p.source !== from || p.target === source || found.has(p.target)) continue;
      found.add(p.target);
      todo.push(p.target);
    }
  }
  return [...found];
}

function served(source, target) {
  return reachable(source).includes(target);
}

// The targets reachable from the chosen source: for "Detect language", every target some chain
// of models translates into. The target chosen stays if it is still reachable.
function updateTargets(preferred) {
  const source = ui.sourceLanguage.value;
  const sources = source === AUTO ? pairs.map((p) => p.source) : [source];
  const targets = byName(sources.flatMap(reachable));
  const keep = [preferred, ui.targetLanguage.value].find((t) => targets.includes(t));
  fillSelect(ui.targetLanguage, targets, keep || targets[0], languageLabel);
  updateLanguages();
}

function updateLanguages() {
  const source = ui.sourceLanguage.value;
  const target = ui.targetLanguage.value;
  ui.swap.disabled = source === AUTO || !served(target, source);
  ui.sourceLabel.textContent = source === AUTO ? 'Text' : `Text in ${languageName(source)}`;
  $('target-label').textContent = target ? `Translation into ${languageName(target)}`
                                         : 'Translation';
}

// Source and target change places; a translation shown becomes the text to translate.
function swapLanguages() {
  const source = ui.sourceLanguage.value;
  const target = ui.targetLanguage.value;
  if (source === AUTO || !served(target, source)) return;
  ui.sourceLanguage.value = target;
  updateTargets(source);
  const translated = ui.translation.textContent;
  if (translated !== '' && !ui.translation.classList.contains('stale')) {
    ui.source.value = translated;
    clearTranslation();
    updateCount();
    updateTranslateButton();
  }
}

function updateAlternatives() {
  // Alternatives are the next hypotheses of the beam search: at most beam size - 1.
  const beam = Number(ui.beamSize.value);
  const current = Math.min(Number(ui.alternatives.value) || 0, beam - 1);
  fillSelect(ui.alternatives, [...Array(beam).keys()], current);
}

function updateCount() {
  const bytes = utf8.encode(ui.source.value).length;
  const characters = [...ui.source.value].length;
  if (!limits) {
    ui.count.textContent = `${number(characters)} characters`;
    return;
  }
  const over = bytes > limits.max_text_bytes;
  ui.count.classList.toggle('over', over);
  const bytesText = characters === bytes ? '' : ` (${number(bytes)} bytes)`;
  ui.count.textContent = over
    ? `${number(characters)} characters${bytesText}: over the limit of ` +
      `${number(limits.max_text_bytes)} bytes a text`
    : `${number(characters)} characters${bytesText} of ${number(limits.max_text_bytes)} bytes`;
}

function updateTranslateButton() {
  ui.translate.disabled = busy || !limits || ui.source.value.trim() === '';
}

// Marks sentence `index` (or none, with -1) in the source and in the translation.
function highlight(index) {
  for (const span of ui.translation.querySelectorAll('.sentence')) {
    span.classList.toggle('active', Number(span.dataset.index) === index);
  }
  const text = ui.source.value;
  if (!shown || index < 0 || text !== shown.source) {
    ui.highlights.textContent = text;
  } else {
    const [begin, end] = shown.sourceSentences[index];
    const mark = document.createElement('mark');
    mark.textContent = text.slice(begin, end);
    ui.highlights.replaceChildren(text.slice(0, begin), mark, text.slice(end));
  }
  // A final newline is not drawn by a text area's last line but would be by the copy.
  ui.highlights.append('\u200b');
  ui.highlights.scrollTop = ui.source.scrollTop;
}

// The sentence of the source text under the cursor, or -1.
function sentenceAtCursor() {
  if (!shown || ui.source.value !== shown.source) return -1;
  const at = ui.source.selectionStart;
  const sentences = shown.sourceSentences;
  for (let i = 0; i < sentences.length; i++) {
    const [begin, end] = sentences[i];
    if (at >= begin && (at < end || (at === end && i === sentences.length - 1))) return i;
  }
  return -1;
}

function clearTranslation() {
  shown = null;
  ui.translation.replaceChildren();
  ui.translation.classList.remove('stale');
  ui.stale.hidden = true;
  ui.copy.disabled = true;
  ui.copyStatus.textContent = '';
  ui.alternativesSection.hidden = true;
  ui.detected.hidden = true;
  highlight(-1);
}

function percent(confidence) {
  return `${Math.round(confidence)}\u00a0%`;
}

// With "Detect language": what the server took the text to be, and how sure it was.
function showDetected(translation, target) {
  const detected = translation.detected_language;
  ui.detected.classList.remove('low');
  if (!detected || !detected.language) {
    ui.detected.hidden = true;
    return;
  }
  const code = detected.language;
  const confidence = detected.confidence || 0;  // Zero is left out of the JSON.
  const name = languageName(code);
  let text;
  if (code === 'und') {
    text = 'No language detected: the text has no letters.';
  } else if (confidence === 0) {
    text = `Read as ${name}: the only language served into ${languageName(target)}.`;
  } else if (confidence < LOW_CONFIDENCE && !translation.error) {
    text = `Detected: ${name}, but only ${percent(confidence)} sure. ` +
        'If that is wrong, choose the text\'s language under From.';
    ui.detected.classList.add('low');
  } else {
    text = `Detected: ${name} (${percent(confidence)})`;
  }
  ui.detected.textContent = text;
  ui.detected.hidden = false;
}

// A text the server did not translate though the request succeeded: with "Detect language", its
// language is not served into the target.
function describeTextError(translation, target) {
  const message = translation.error.message || `error ${translation.error.code}`;
  const detected = translation.detected_language;
  if (detected && detected.language && detected.language !== 'und') {
    return `${languageLabel(detected.language)} cannot be translated into ` +
        `${languageName(target)} here. ${message}`;
  }
  return `This text was not translated. ${message}`;
}

function showTranslation(source, translation) {
  // None when the text was not translated (translation.error).
  const [best, ...others] = translation.hypotheses || [];
  const text = best ? best.text : '';
  const sourceSentences = stringRanges(source, translation.sentences);
  const targetSentences = best ? stringRanges(text, best.sentences) : null;
  const paired = sourceSentences && targetSentences &&
      sourceSentences.length === targetSentences.length;
  shown = paired ? {source, sourceSentences, targetSentences} : null;

  const nodes = [];
  if (paired) {
    let at = 0;
    targetSentences.forEach(([begin, end], index) => {
      if (begin > at) nodes.push(text.slice(at, begin));
      const span = document.createElement('span');
      span.className = 'sentence';
      span.tabIndex = 0;
      span.dataset.index = String(index);
      span.textContent = text.slice(begin, end);
      nodes.push(span);
      at = end;
    });
    if (at < text.length) nodes.push(text.slice(at));
  } else {
    nodes.push(text);
  }
  ui.translation.replaceChildren(...nodes);
  ui.translation.classList.remove('stale');
  ui.stale.hidden = true;
  ui.copy.disabled = text === '';
  ui.copyStatus.textContent = '';

  ui.alternativesList.replaceChildren(...others.map((hypothesis) => {
    const item = document.createElement('li');
    item.textContent = hypothesis.text;
    return item;
  }));
  ui.alternativesSection.hidden = others.length === 0;
  highlight(sentenceAtCursor());
}

async function translate() {
  if (busy || ui.translate.disabled) return;
  const source = ui.source.value;
  const beam = Number(ui.beamSize.value);
  const alternatives = Number(ui.alternatives.value);
  const sourceLanguage = ui.sourceLanguage.value;
  const targetLanguage = ui.targetLanguage.value;
  const request = {
    source_language: sourceLanguage,
    target_language: targetLanguage,
    texts: [source],
    options: {
      beam_size: beam,
      num_hypotheses: alternatives + 1,
      format: ui.html.checked ? 'TEXT_FORMAT_HTML' : 'TEXT_FORMAT_PLAIN',
    },
  };
  busy = true;
  updateTranslateButton();
  ui.translate.textContent = 'Translating…';
  ui.translation.setAttribute('aria-busy', 'true');
  clearError();
  try {
    const response = await callApi('/v1/translate', {
      method: 'POST',
      headers: {'Content-Type': 'application/json', 'X-Request-Timeout': REQUEST_TIMEOUT},
      body: JSON.stringify(request),
    });
    const translation = response.translations[0];
    showTranslation(source, translation);
    showDetected(translation, targetLanguage);
    if (translation.error) showError(describeTextError(translation, targetLanguage));
  } catch (e) {
    ui.detected.hidden = true;  // It was about the last translation.
    showError(e.message);
  } finally {
    busy = false;
    ui.translate.textContent = 'Translate';
    ui.translation.setAttribute('aria-busy', 'false');
    updateTranslateButton();
  }
}

async function copyTranslation() {
  const text = ui.translation.textContent;
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
    } else {
      // Pages served over plain HTTP from another host have no clipboard API.
      const scratch = document.createElement('textarea');
      scratch.value = text;
      scratch.setAttribute('readonly', '');
      scratch.className = 'visually-hidden';
      document.body.append(scratch);
      scratch.select();
      const copied = document.execCommand('copy');
      scratch.remove();
      if (!copied) throw new Error('the browser refused');
    }
    ui.copyStatus.textContent = 'Copied.';
  } catch (e) {
    ui.copyStatus.textContent = 'Could not copy: select the translation and copy it.';
  }
}

async function loadModels() {
  try {
    const answer = await callApi('/v1/models');
    models = answer.models;
    limits = answer.limits;
  } catch (e) {
    if (e.status === 401) return;  // Loaded again once a key is given.
    // 503 while the server loads its models: try again shortly.
    ui.status.textContent = e.status === 503 ? 'The server is loading its models…' : e.message;
    setTimeout(loadModels, 2000);
    return;
  }
  ui.keyForm.hidden = true;
  pairs = models.filter((m) => m.source_language && m.target_language)
                .map((m) => ({source: m.source_language, target: m.target_language}));
  if (pairs.length === 0) {
    ui.status.textContent = 'No model here says which languages it translates (source_lang and ' +
        'target_lang in its configuration): this page translates by language.';
    return;
  }
  // First the default model's languages (or the first pair), or what the user had chosen before
  // a reload.
  const byDefault = models.find((m) => m.is_default);
  const start = pairs.find((p) => byDefault && p.source === byDefault.source_language &&
                                  p.target === byDefault.target_language) || pairs[0];
  const source = ui.sourceLanguage.value || start.source;
  const target = ui.targetLanguage.value || start.target;
  fillSelect(ui.sourceLanguage, [AUTO, ...byName(pairs.map((p) => p.source))], source,
             (code) => (code === AUTO ? 'Detect language' : languageLabel(code)));
  updateTargets(target);
  const beams = [...Array(limits.max_beam_size).keys()].map((i) => i + 1);
  fillSelect(ui.beamSize, beams, Math.min(DEFAULT_BEAM_SIZE, limits.max_beam_size));
  updateAlternatives();
  ui.controls.disabled = false;
  ui.status.textContent =
      `Serving ${models.length} model${models.length === 1 ? '' : 's'}.`;
  updateCount();
  updateTranslateButton();
}

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  translate();
});
ui.source.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
    event.preventDefault();
    translate();
  }
});
ui.source.addEventListener('input', () => {
  ui.copyStatus.textContent = '';
  updateCount();
  updateTranslateButton();
  const changed = shown !== null && ui.source.value !== shown.source;
  ui.translation.classList.toggle('stale', changed);
  ui.stale.hidden = !changed;
  highlight(sentenceAtCursor());
});
for (const event of ['keyup', 'click', 'select', 'focus']) {
  ui.source.addEventListener(event, () => highlight(sentenceAtCursor()));
}
ui.source.addEventListener('scroll', () => {
  ui.highlights.scrollTop = ui.source.scrollTop;
});
for (const event of ['mouseover', 'focusin']) {
  ui.translation.addEventListener(event, (e) => {
    if (e.target.classList && e.target.classList.contains('sentence')) {
      highlight(Number(e.target.dataset.index));
    }
  });
}
for (const event of ['mouseleave', 'focusout']) {
  ui.translation.addEventListener(event, () => highlight(sentenceAtCursor()));
}
ui.beamSize.addEventListener('change', updateAlternatives);
ui.sourceLanguage.addEventListener('change', () => updateTargets());
ui.targetLanguage.addEventListener('change', updateLanguages);
ui.swap.addEventListener('click', swapLanguages);
ui.copy.addEventListener('click', copyTranslation);
ui.keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  try {
    sessionStorage.setItem(KEY_STORAGE, ui.key.value.trim());
  } catch (e) {
    // apiKey() reads the field instead.
  }
  ui.status.textContent = 'Checking the key…';
  loadModels();
});

updateCount();
loadModels();
