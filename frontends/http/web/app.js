// mtserve's translation page: calls the server's JSON API (GET /v1/models, POST /v1/translate)
// and shows the translation sentence by sentence, from the sentence ranges the server returns.
// Its file tab sends a file to POST /v1/translate_file, follows the job (GET /v1/jobs/{id}) with
// a progress bar and offers the translated file (GET /v1/jobs/{id}/result); the formats it takes
// come from GET /frontend/settings, the size limit from GET /v1/models.
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
  format: $('format'),
  formatLabel: $('format-label'),
  alternativesLabel: $('alternatives-label'),
  sentenceHint: $('sentence-hint'),
  textTab: $('text-tab'),
  fileTab: $('file-tab'),
  textPanel: $('text-panel'),
  filePanel: $('file-panel'),
  dropZone: $('drop-zone'),
  file: $('file'),
  fileHelp: $('file-help'),
  fileChosen: $('file-chosen'),
  translateFile: $('translate-file'),
  cancelFile: $('cancel-file'),
  progress: $('file-progress'),
  progressBar: $('file-progress-bar'),
  fileStatus: $('file-status'),
  download: $('download'),
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
// The file tab: the extensions the server takes (".srt"), or null until known; the file chosen;
// the job being followed ({id}, its id null while the file uploads), or null.
let fileFormats = null;
let chosenFile = null;
let job = null;
const POLL_MS = 250;  // How often a running job is read.
const FORMAT_NAMES = {
  '.txt': 'Plain text', '.html': 'HTML', '.htm': 'HTML', '.md': 'Markdown',
  '.srt': 'SubRip', '.vtt': 'WebVTT', '.docx': 'Word document', '.pptx': 'PowerPoint',
  '.odt': 'OpenDocument text', '.odp': 'OpenDocument presentation', '.epub': 'EPUB book',
};

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
function describeError(status, body, what = 'text') {
  const message = body && typeof body.message === 'string' ? body.message : '';
  const lead = {
    400: 'The server cannot translate this',
    401: 'The server asks for a valid API key',
    404: what === 'file' ? 'The server no longer knows this file\'s job' : 'Not found',
    408: 'The request took too long to arrive',
    409: 'The translated file is not ready',
    413: `The ${what} is too large for one request`,
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
    response = await fetch(path, {method: init.method, body: init.body, headers});
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
    const error = new Error(describeError(response.status, body, init.what));
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
      format: ui.format.value,
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
  updateFileHelp();
  updateFileButton();
}

// The tabs: Text (the text area) and File (a file to upload). The format picker and the
// alternatives are the text's: a file's format is its own, and a file gets one translation.
function showTab(tab) {
  const file = tab === ui.fileTab;
  for (const t of [ui.textTab, ui.fileTab]) {
    t.setAttribute('aria-selected', String(t === tab));
    t.tabIndex = t === tab ? 0 : -1;
  }
  ui.textPanel.hidden = file;
  ui.filePanel.hidden = !file;
  ui.formatLabel.hidden = file;
  ui.alternativesLabel.hidden = file;
  ui.sentenceHint.hidden = file;  // It is about the text's sentences.
  clearError();
}

function fileLimit() {
  // uint64 fields are strings in the JSON mapping; absent (0) when the server names no limit.
  return Number((limits && limits.max_file_bytes) || 0);
}

// "1.5 MB": a size for people, beside the exact bytes.
function sizeText(bytes) {
  if (bytes < 1024) return `${number(bytes)} bytes`;
  const units = ['KiB', 'MiB', 'GiB'];
  let size = bytes;
  let unit = -1;
  do {
    size /= 1024;
    unit++;
  } while (size >= 1024 && unit < units.length - 1);
  return `${size.toLocaleString('en', {maximumFractionDigits: 1})} ${units[unit]}`;
}

function formatList() {
  return fileFormats.map((e) => (FORMAT_NAMES[e] ? `${FORMAT_NAMES[e]} (${e})` : e)).join(', ');
}

function updateFileHelp() {
  if (fileFormats === null) return;
  if (fileFormats.length === 0) {
    ui.fileHelp.textContent = 'This server does not translate files.';
    return;
  }
  const limit = fileLimit();
  ui.fileHelp.textContent = `${formatList()}` +
      (limit > 0 ? `; up to ${sizeText(limit)} (${number(limit)} bytes).` : '.');
}

function updateFileButton() {
  ui.translateFile.disabled = chosenFile === null || job !== null || !limits;
}

// GET /frontend/settings (LibreTranslate's): whether the server translates files, and which.
async function loadFileSettings() {
  try {
    const settings = await callApi('/frontend/settings');
    fileFormats = settings.filesTranslation && Array.isArray(settings.supportedFilesFormat)
      ? settings.supportedFilesFormat.map((e) => String(e).toLowerCase()) : [];
  } catch (e) {
    if (e.status === 401) return;  // Loaded again once a key is given.
    setTimeout(loadFileSettings, 2000);
    return;
  }
  ui.file.accept = fileFormats.join(',');
  ui.dropZone.classList.toggle('off', fileFormats.length === 0);
  ui.file.disabled = fileFormats.length === 0;
  updateFileHelp();
}

function extensionOf(name) {
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot).toLowerCase();
}

function resetFileResult() {
  ui.progress.hidden = true;
  ui.fileStatus.textContent = '';
  ui.download.hidden = true;
  ui.download.removeAttribute('href');
}

// A file chosen or dropped: refused here if the server would refuse its name or size, before
// anything is sent.
function chooseFile(file) {
  clearError();
  resetFileResult();
  chosenFile = null;
  ui.fileChosen.textContent = '';
  if (file) {
    const extension = extensionOf(file.name);
    const limit = fileLimit();
    if (fileFormats !== null && !fileFormats.includes(extension)) {
      showError(`"${file.name}" cannot be translated here: this server translates ` +
                (fileFormats.length ? `${formatList()} files.` : 'no files.'));
    } else if (limit > 0 && file.size > limit) {
      showError(`"${file.name}" is too large: ${sizeText(file.size)} (${number(file.size)} ` +
                `bytes), over the server's limit of ${sizeText(limit)} (${number(limit)} bytes) ` +
                'a file.');
    } else {
      chosenFile = file;
      ui.fileChosen.textContent = `${file.name}: ${sizeText(file.size)}` +
          (FORMAT_NAMES[extension] ? `, ${FORMAT_NAMES[extension]}` : '');
    }
  }
  updateFileButton();
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// The job's progress on the bar: sentences translated of the total (0 of 0 until the server has
// read the file).
function showJob(record) {
  const done = Number(record.sentences_done || 0);
  const total = Number(record.sentences_total || 0);
  const state = record.state || 'FILE_JOB_STATE_QUEUED';  // Zero is left out of the JSON.
  ui.progress.hidden = false;
  ui.progress.setAttribute('aria-valuemax', String(total));
  ui.progress.setAttribute('aria-valuenow', String(Math.min(done, total)));
  ui.progress.setAttribute('aria-valuetext', `${number(done)} of ${number(total)} sentences`);
  const finished = state === 'FILE_JOB_STATE_DONE';
  ui.progressBar.style.width = `${finished ? 100 : total > 0 ? (100 * done) / total : 0}%`;
  ui.fileStatus.textContent = {
    FILE_JOB_STATE_QUEUED: 'Waiting for the server…',
    FILE_JOB_STATE_RUNNING: `Translating: ${number(done)} of ${number(total)} sentences`,
    FILE_JOB_STATE_DONE: `Translated: ${number(total)} sentence${total === 1 ? '' : 's'}.`,
    FILE_JOB_STATE_FAILED: 'Not translated.',
    FILE_JOB_STATE_CANCELLED: 'Cancelled.',
  }[state] || state;
  if (finished) {
    const name = record.file_name || 'translation';
    ui.download.href = record.result_url || `/v1/jobs/${encodeURIComponent(record.id)}/result`;
    ui.download.download = name;
    ui.download.textContent = `Download ${name} (${sizeText(Number(record.result_bytes || 0))})`;
    ui.download.hidden = false;
  }
  return state;
}

function endJob() {
  job = null;
  ui.cancelFile.hidden = true;
  ui.translateFile.textContent = 'Translate file';
  updateFileButton();
}

// POST /v1/translate_file with the chosen file and the page's languages and beam size, then the
// job read every POLL_MS until it ends.
async function translateChosenFile() {
  if (chosenFile === null || job !== null) return;
  clearError();
  resetFileResult();
  const form = new FormData();
  form.append('file', chosenFile, chosenFile.name);
  form.append('source_language', ui.sourceLanguage.value);
  form.append('target_language', ui.targetLanguage.value);
  form.append('options', JSON.stringify({beam_size: Number(ui.beamSize.value)}));
  const current = {id: null};
  job = current;
  updateFileButton();
  ui.translateFile.textContent = 'Uploading…';
  ui.cancelFile.hidden = false;
  try {
    const submitted = await callApi('/v1/translate_file', {method: 'POST', body: form, what: 'file'});
    current.id = submitted.id;
    if (job !== current) {
      // Cancelled while uploading: the job the server has made goes too.
      callApi(`/v1/jobs/${encodeURIComponent(current.id)}`, {method: 'DELETE', what: 'file'})
          .catch(() => {});
      return;
    }
    ui.translateFile.textContent = 'Translating…';
    let record = submitted;
    for (;;) {
      if (job !== current) return;  // Cancelled.
      const state = showJob(record);
      if (state === 'FILE_JOB_STATE_FAILED') {
        const message = (record.error && record.error.message) || 'no reason given';
        showError(`The file was not translated: ${message}`);
      }
      if (['FILE_JOB_STATE_DONE', 'FILE_JOB_STATE_FAILED',
           'FILE_JOB_STATE_CANCELLED'].includes(state)) {
        break;
      }
      await sleep(POLL_MS);
      if (job !== current) return;
      record = await callApi(`/v1/jobs/${encodeURIComponent(current.id)}`, {what: 'file'});
    }
  } catch (e) {
    if (job !== current) return;
    ui.progress.hidden = true;
    ui.fileStatus.textContent = '';
    showError(e.message);
  }
  if (job === current) endJob();
}

// DELETE /v1/jobs/{id}: the server stops the job and forgets it.
async function cancelFile() {
  const current = job;
  if (current === null) return;
  endJob();
  ui.progress.hidden = true;
  ui.fileStatus.textContent = 'Cancelled.';
  if (current.id === null) return;  // Still uploading: deleted when the server answers.
  try {
    await callApi(`/v1/jobs/${encodeURIComponent(current.id)}`, {method: 'DELETE', what: 'file'});
  } catch (e) {
    showError(e.message);
  }
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
  if (fileFormats === null) loadFileSettings();
});

for (const tab of [ui.textTab, ui.fileTab]) {
  tab.addEventListener('click', () => showTab(tab));
}
// Arrow keys move between the tabs, as in a tab list.
for (const [tab, other] of [[ui.textTab, ui.fileTab], [ui.fileTab, ui.textTab]]) {
  tab.addEventListener('keydown', (event) => {
    if (!['ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(event.key)) return;
    event.preventDefault();
    const next = event.key === 'Home' ? ui.textTab : event.key === 'End' ? ui.fileTab : other;
    showTab(next);
    next.focus();
  });
}
ui.file.addEventListener('change', () => chooseFile(ui.file.files[0] || null));
for (const event of ['dragenter', 'dragover']) {
  ui.dropZone.addEventListener(event, (e) => {
    e.preventDefault();
    if (!ui.file.disabled) ui.dropZone.classList.add('dragging');
  });
}
ui.dropZone.addEventListener('dragleave', () => ui.dropZone.classList.remove('dragging'));
ui.dropZone.addEventListener('drop', (event) => {
  event.preventDefault();
  ui.dropZone.classList.remove('dragging');
  if (ui.file.disabled) return;
  const files = event.dataTransfer ? event.dataTransfer.files : [];
  if (files.length > 1) {
    showError('Drop one file at a time.');
    return;
  }
  chooseFile(files[0] || null);
});
ui.translateFile.addEventListener('click', translateChosenFile);
ui.cancelFile.addEventListener('click', cancelFile);

updateCount();
loadModels();
loadFileSettings();
