// mtserve's LibreTranslate API through the published npm client `libretranslate` (1.0.1, pinned in
// package.json): code nobody here wrote, calling GET /languages and then POST /translate as it
// would call LibreTranslate. Its translations must equal mtserve's native /v1/translate answers
// for the same texts.
//
// Usage: node client_test.js PORT SENTENCE...   (NODE_PATH holds node_modules with the client)
'use strict';

const { translate } = require('libretranslate');
const { expect, run } = require('../test_lib/checks');

const port = process.argv[2];
const sentences = process.argv.slice(3);
const apiurl = `http://127.0.0.1:${port}`;

async function native(texts, format) {
  const response = await fetch(`${apiurl}/v1/translate`, {
    method: 'POST',
    body: JSON.stringify({ texts, options: { format: format === 'html' ? 'TEXT_FORMAT_HTML' : 'TEXT_FORMAT_PLAIN' } }),
  });
  const answer = await response.json();
  return answer.translations.map((t) => t.hypotheses[0].text);
}

async function main() {
  if (sentences.length === 0) throw new Error('no sentences given');
  const expected = await native(sentences, 'text');
  for (let i = 0; i < sentences.length; i++) {
    const got = await translate({ query: sentences[i], source: 'en', target: 'de', apiurl });
    expect(`en->de "${sentences[i]}"`, got === expected[i],
           `client ${JSON.stringify(got)}, /v1/translate ${JSON.stringify(expected[i])}`);
  }
  // The client's default source is "auto": one model translates into German, so it is English.
  const auto = await translate({ query: sentences[0], target: 'de', apiurl });
  expect('source auto (the client\'s default)', auto === expected[0],
         `client ${JSON.stringify(auto)}, /v1/translate ${JSON.stringify(expected[0])}`);

  const html = `<p>${sentences[0]} <b>${sentences[1] || sentences[0]}</b></p>`;
  const [htmlExpected] = await native([html], 'html');
  const htmlGot = await translate({ query: html, source: 'en', target: 'de', format: 'html', apiurl });
  expect('format html', htmlGot === htmlExpected && htmlGot.includes('<b>'),
         `client ${JSON.stringify(htmlGot)}, /v1/translate ${JSON.stringify(htmlExpected)}`);

  // The client checks languages against GET /languages before it translates.
  let refused = null;
  try {
    await translate({ query: sentences[0], source: 'en', target: 'xx', apiurl });
  } catch (error) {
    refused = error;
  }
  expect('a target not in /languages refused by the client', refused instanceof TypeError,
         `${refused}`);
}

run(main);
