/**
 * The `/docs` page: a self-contained HTML page (no CDN, no bundled assets, so it works
 * offline and inside the image) that reads /openapi.json and lists every endpoint. Each
 * parameter shows its type, a required marker, its default, its help from the docstring and
 * a control: a select for an enum or a boolean, an input for a number or a string, a file
 * input for a media parameter. Controls write into the JSON body (which stays editable for
 * lists and objects); the page sends it (as multipart when files are chosen) and shows the
 * same request as a curl command. A job (serverless compute) is followed until it ends;
 * images in a result are shown, and every media file can be downloaded, its base64
 * shortened in the text. Data from the service is only ever set as text, or as a data URL's
 * bytes, never as HTML.
 *
 * Hand-written rather than Swagger UI (swagger-ui-dist 5.35 is 3.4 MB packed, 12.5 MB
 * unpacked): that renderer neither offers a file input for the toolkit's upload-or-FileModel
 * parameters, nor shows a returned image, nor follows a job to its end.
 */

/** The page's icon, also served at /favicon.ico so a browser's own request finds it. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#0a6"/>' +
  '<path d="M12 8c-3 0-3 2-3 4s0 4-3 4c3 0 3 2 3 4s0 4 3 4M20 8c3 0 3 2 3 4s0 4 3 4c-3 0-3 2-3 4s0 4-3 4" ' +
  'fill="none" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/></svg>';

export function renderDocsPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - API docs</title>
<link rel="icon" type="image/svg+xml" href="data:image/svg+xml,${encodeURIComponent(FAVICON_SVG)}">
<style>
  body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 64rem; padding: 0 1rem; color: #1d1d1f; }
  h1 { font-size: 1.6rem; } .endpoint { border: 1px solid #ccc; border-radius: 6px; margin: 1rem 0; }
  .endpoint > summary { cursor: pointer; padding: .6rem .8rem; font-family: ui-monospace, monospace; }
  .method { display: inline-block; min-width: 4.5em; font-weight: bold; color: #0a6; }
  .body { padding: 0 .8rem .8rem; } textarea { width: 100%; min-height: 8rem; font-family: ui-monospace, monospace; }
  pre { background: #f4f4f4; padding: .6rem; overflow: auto; max-height: 24rem; white-space: pre-wrap; } pre:empty { display: none; }
  label { display: block; margin: .4rem 0; } .status { font-weight: bold; } .doc, .help { white-space: pre-wrap; }
  table.parameters { border-collapse: collapse; width: 100%; margin: .6rem 0; }
  .parameters th, .parameters td { text-align: left; vertical-align: top; padding: .35rem .5rem; border-bottom: 1px solid #e4e4e4; }
  .parameters .type, .parameters .default { font-family: ui-monospace, monospace; font-size: .85em; color: #555; }
  .required { color: #b00; font-size: .8em; } .choices { color: #555; font-size: .9em; }
  .media img { display: block; max-width: 100%; max-height: 24rem; margin: .4rem 0; border: 1px solid #ccc; }
</style>
</head>
<body>
<h1 id="title">${escapeHtml(title)}</h1>
<p>Endpoints of this service, from <a href="openapi.json">openapi.json</a>. Open one to try it.</p>
<label>API key, if the service needs one (sent as <code>Authorization: Bearer</code>, kept in this page only):
  <input id="api-key" type="password" autocomplete="off"></label>
<div id="endpoints">Loading...</div>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** The page's code, plain ES5 for any browser; raw, so its regular expressions and quotes read as they run. */
const PAGE_SCRIPT = String.raw`
(function () {
  var list = document.getElementById('endpoints');
  var keyInput = document.getElementById('api-key');
  var base = location.pathname.replace(/\/docs\/?$/, '');
  var components = {};
  var refreshers = [];
  function element(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }
  // A reference to components/schemas, followed (a top-level enum or model's own schema).
  function resolve(schema) {
    var name = schema && typeof schema.$ref === 'string' ? schema.$ref.split('/').pop() : null;
    return name && components[name] ? components[name] : schema;
  }
  function example(schema) {
    if (!schema || typeof schema !== 'object') return null;
    if ('default' in schema) return schema['default'];
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
    if (schema['enum']) return schema['enum'][0];
    var type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    if (schema.anyOf) return example(schema.anyOf[0]);
    if (schema.$ref && resolve(schema) !== schema) return example(resolve(schema));
    if (type === 'object') {
      // An optional field without a default is left out: sent as a zero, the function would take it as asked for.
      var value = {};
      var required = schema.required || [];
      Object.keys(schema.properties || {}).forEach(function (key) {
        var property = schema.properties[key];
        if (required.indexOf(key) >= 0 || (property && typeof property === 'object' && 'default' in property)) value[key] = example(property);
      });
      return value;
    }
    return { string: '', integer: 0, number: 0, boolean: false, array: [], 'null': null }[type];
  }
  // A file part: binary itself, or the binary member of the toolkit's upload-or-FileModel union.
  function uploadOf(schema) {
    if (!schema || typeof schema !== 'object') return null;
    if (schema.format === 'binary') return schema;
    return (schema.anyOf || []).filter(function (member) { return member.format === 'binary'; })[0] || null;
  }
  function typeName(schema) {
    if (!schema || typeof schema !== 'object') return 'any';
    if (uploadOf(schema)) return 'file';
    if (schema.$ref) return schema.$ref.split('/').pop();
    if (schema['enum']) {
      return schema.title || schema['enum'].map(function (value) { return value === null ? 'null' : typeof value; })
        .filter(function (type, index, types) { return types.indexOf(type) === index; }).join(' | ');
    }
    if (schema.anyOf || schema.oneOf) return (schema.anyOf || schema.oneOf).map(typeName).join(' | ');
    var type = Array.isArray(schema.type) ? schema.type.join(' | ') : schema.type;
    if (type === 'array') return typeName(schema.items) + '[]';
    if (type === 'object') return schema.title || 'object';
    if (!type) return 'any';
    return type + (schema.format ? ' (' + schema.format + ')' : '');
  }
  // How a parameter is filled in: its enum choices, or a scalar type; null leaves it to the JSON body.
  function controlOf(schema) {
    schema = resolve(schema);
    if (!schema || typeof schema !== 'object') return null;
    if (Array.isArray(schema.anyOf)) {
      var members = schema.anyOf.filter(function (member) { return member.type !== 'null'; });
      return members.length === 1 ? controlOf(members[0]) : null;
    }
    if (Array.isArray(schema['enum'])) return { choices: schema['enum'], listed: true };
    var types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter(function (type) { return type !== 'null'; });
    if (types.length !== 1) return null;
    if (types[0] === 'boolean') return { choices: [true, false] };
    if (types[0] === 'integer' || types[0] === 'number') return { input: 'number', step: types[0] === 'integer' ? '1' : 'any' };
    if (types[0] === 'string' && !uploadOf(schema)) return { input: 'text' };
    return null;
  }
  function render(spec) {
    document.title = spec.info.title + ' - API docs';
    document.getElementById('title').textContent = spec.info.title;
    components = (spec.components && spec.components.schemas) || {};
    list.textContent = '';
    Object.keys(spec.paths).forEach(function (path) {
      Object.keys(spec.paths[path]).forEach(function (method) {
        list.appendChild(renderOperation(path, method.toUpperCase(), spec.paths[path][method]));
      });
    });
    if (!list.children.length) list.textContent = 'This service has no endpoints.';
  }
  function readBody(text) {
    try {
      var value = JSON.parse(text.value || '{}');
      return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null;
    } catch (error) {
      return null;
    }
  }
  function renderOperation(path, method, operation) {
    var details = element('details', undefined, 'endpoint');
    details.dataset.path = path;
    var summary = element('summary');
    summary.appendChild(element('span', method, 'method'));
    summary.appendChild(document.createTextNode(' ' + path + '  ' + (operation.summary || '')));
    details.appendChild(summary);
    var body = element('div', undefined, 'body');
    if (operation.description) body.appendChild(element('p', operation.description, 'doc'));
    // GET takes query parameters; other methods a body, multipart when it has file parameters.
    var content = method === 'GET' ? null : operation.requestBody.content;
    var schema = content && (content['multipart/form-data'] || content['application/json']).schema;
    var parameters = method === 'GET'
      ? (operation.parameters || []).map(function (p) { return { name: p.name, schema: p.schema, required: !!p.required }; })
      : Object.keys((schema && schema.properties) || {}).map(function (name) {
          return { name: name, schema: schema.properties[name], required: (schema.required || []).indexOf(name) >= 0 };
        });
    var fileInputs = {};
    var controls = [];
    var plain = {};
    var text = element('textarea');
    var table = element('table', undefined, 'parameters');
    if (parameters.length) {
      var head = table.appendChild(element('tr'));
      ['Parameter', 'Value', 'Description'].forEach(function (title) { head.appendChild(element('th', title)); });
      body.appendChild(table);
    }
    parameters.forEach(function (parameter) {
      var property = parameter.schema || {};
      var row = table.appendChild(element('tr'));
      row.dataset.parameter = parameter.name;
      var described = row.appendChild(element('td'));
      described.appendChild(element('code', parameter.name, 'name'));
      if (parameter.required) described.appendChild(element('span', ' * required', 'required'));
      described.appendChild(element('div', typeName(property), 'type'));
      if ('default' in property) described.appendChild(element('div', 'default: ' + JSON.stringify(property['default']), 'default'));
      var cell = row.appendChild(element('td'));
      var help = row.appendChild(element('td', undefined, 'help'));
      help.appendChild(element('div', property.description || resolve(property).description || '', 'text'));
      var single = uploadOf(property);
      var file = single || (property.type === 'array' && property.items ? uploadOf(property.items) : null);
      if (file && method !== 'GET') {
        var input = element('input');
        input.type = 'file';
        input.name = parameter.name;
        input.multiple = !single;
        input.accept = file.contentMediaType || '';
        input.setAttribute('aria-label', parameter.name);
        input.addEventListener('change', function () { refresh(); });
        cell.appendChild(input);
        fileInputs[parameter.name] = input;
        return;
      }
      if (parameter.required || 'default' in property) plain[parameter.name] = example(property);
      var control = controlOf(property);
      if (!control) {
        cell.textContent = 'in the JSON body';
        return;
      }
      controls.push(renderControl(parameter, control, cell, help, text, refresh));
    });
    // A body's own example (a chat request's) beats one made up field by field.
    if (schema && Array.isArray(schema.examples) && schema.examples.length > 0) plain = schema.examples[0];
    text.value = JSON.stringify(plain, null, 2);
    var textLabel = element('label', method === 'GET' ? 'Query (JSON, null leaves a parameter to its default)' : 'Body (JSON)');
    text.setAttribute('aria-label', 'request body for ' + path);
    body.appendChild(textLabel);
    body.appendChild(text);
    var send = element('button', 'Send');
    var view = { status: element('p', '', 'status'), media: element('div', undefined, 'media'), output: element('pre', '', 'output') };
    send.addEventListener('click', function () { call(path, method, text, fileInputs, view); });
    body.appendChild(send);
    body.appendChild(element('p', 'The same request with curl:'));
    var curl = body.appendChild(element('pre', '', 'curl'));
    var copy = body.appendChild(element('button', 'Copy curl'));
    copy.addEventListener('click', function () {
      if (navigator.clipboard) navigator.clipboard.writeText(curl.textContent).then(function () { copy.textContent = 'Copied'; }, function () { select(curl); });
      else select(curl);
    });
    function refresh() {
      var values = readBody(text);
      controls.forEach(function (show) { if (values) show(values); });
      curl.textContent = values ? curlOf(path, method, values, fileInputs) : 'The body is not a JSON object.';
    }
    text.addEventListener('input', refresh);
    refreshers.push(refresh);
    refresh();
    body.appendChild(view.status);
    body.appendChild(view.media);
    body.appendChild(view.output);
    details.appendChild(body);
    return details;
  }
  function select(node) {
    var range = document.createRange();
    range.selectNodeContents(node);
    getSelection().removeAllRanges();
    getSelection().addRange(range);
  }
  // A control writes its parameter into the JSON body; returns how it shows the body's value back.
  function renderControl(parameter, control, cell, help, text, refresh) {
    var input;
    if (control.choices) {
      input = element('select');
      if (!parameter.required) input.appendChild(element('option', '(not sent)')).value = '';
      control.choices.forEach(function (choice) {
        input.appendChild(element('option', typeof choice === 'string' ? choice : JSON.stringify(choice))).value = JSON.stringify(choice);
      });
      if (control.listed) {
        help.appendChild(element('div', 'one of: ' + control.choices.map(function (choice) { return JSON.stringify(choice); }).join(', '), 'choices'));
      }
    } else {
      input = element('input');
      input.type = control.input;
      if (control.step) input.step = control.step;
    }
    input.name = parameter.name;
    input.setAttribute('aria-label', parameter.name);
    cell.appendChild(input);
    input.addEventListener('input', function () {
      var values = readBody(text);
      if (!values) return refresh();
      var value = input.value;
      if (value === '' && !parameter.required) delete values[parameter.name];
      else values[parameter.name] = control.choices ? JSON.parse(value) : control.input === 'number' ? Number(value) : value;
      text.value = JSON.stringify(values, null, 2);
      refresh();
    });
    return function show(values) {
      var value = values[parameter.name];
      if (control.choices) input.value = value === undefined ? '' : JSON.stringify(value);
      else if (document.activeElement !== input) input.value = value === undefined || value === null ? '' : String(value);
    };
  }
  function quote(word) {
    return "'" + String(word).replace(/'/g, "'\\''") + "'";
  }
  // As the page sends a form field: text as it is, anything else as JSON.
  function formValue(value) {
    return typeof value === 'string' ? value : JSON.stringify(value);
  }
  function queryOf(values) {
    // As the gateway reads a query: null leaves the parameter to its default, a list repeats the key.
    var query = new URLSearchParams();
    Object.keys(values).forEach(function (name) {
      var value = values[name];
      if (value === null || value === undefined) return;
      (Array.isArray(value) ? value : [value]).forEach(function (item) { query.append(name, formValue(item)); });
    });
    return query.toString();
  }
  function chosenFiles(fileInputs) {
    return Object.keys(fileInputs).filter(function (name) { return fileInputs[name].files.length; });
  }
  function curlOf(path, method, values, fileInputs) {
    var url = location.origin + base + path;
    var words = ['curl'];
    var files = chosenFiles(fileInputs);
    if (method === 'GET') {
      var query = queryOf(values);
      words.push(quote(url + (query ? '?' + query : '')));
    } else {
      if (method !== 'POST') words.push('-X ' + method);
      words.push(quote(url));
    }
    var key = keyInput.value.trim();
    if (key) words.push('-H ' + quote('authorization: Bearer ' + key));
    if (method === 'GET') return words.join(' \\\n  ');
    if (files.length) {
      // --form-string sends a value as it is: -F would read a leading @ or < as a file.
      Object.keys(values).forEach(function (name) { words.push('--form-string ' + quote(name + '=' + formValue(values[name]))); });
      files.forEach(function (name) {
        Array.prototype.forEach.call(fileInputs[name].files, function (file) {
          var local = /[;,"\\]/.test(file.name) ? '"' + file.name.replace(/["\\]/g, '\\$&') + '"' : file.name;
          words.push('-F ' + quote(name + '=@' + local));
        });
      });
    } else {
      words.push("-H 'content-type: application/json'");
      words.push('-d ' + quote(JSON.stringify(values)));
    }
    return words.join(' \\\n  ');
  }
  function call(path, method, text, fileInputs, view) {
    var status = view.status;
    var values;
    try { values = JSON.parse(text.value || '{}'); } catch (error) { status.textContent = 'The body is not valid JSON: ' + error.message; return; }
    var url = base + path;
    var init = { method: method, headers: {} };
    var names = chosenFiles(fileInputs);
    var key = keyInput.value.trim();
    if (key) init.headers.authorization = 'Bearer ' + key;
    if (method === 'GET') {
      url += '?' + queryOf(values);
    } else if (names.length) {
      var form = new FormData();
      Object.keys(values).forEach(function (name) { form.append(name, formValue(values[name])); });
      names.forEach(function (name) {
        Array.prototype.forEach.call(fileInputs[name].files, function (file) { form.append(name, file); });
      });
      init.body = form;
    } else {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(values);
    }
    status.textContent = 'Sending...';
    view.media.textContent = '';
    view.output.textContent = '';
    fetch(url, init).then(function (response) {
      status.textContent = response.status + ' ' + response.statusText;
      return response.text();
    }).then(function (body) {
      var value;
      try { value = JSON.parse(body); } catch (error) { view.output.textContent = body; return; }
      show(value, view);
      if (isRunningJob(value)) follow(value, init.headers, view);
    }).catch(function (error) { status.textContent = 'Request failed: ' + error.message; });
  }
  var ENDED = ['FINISHED', 'FAILED', 'TIMEOUT', 'CANCELLED'];
  function isRunningJob(value) {
    return value !== null && typeof value === 'object' && typeof value.job_id === 'string' && typeof value.refresh_job_url === 'string' && ENDED.indexOf(value.status) < 0;
  }
  // Serverless compute answers with a job: read it again (each read waits up to 10 s for its end) until it ends.
  function follow(job, headers, view) {
    var progress = typeof job.progress === 'number' && job.progress > 0 ? ' ' + Math.round(job.progress * 100) + '%' : '';
    view.status.textContent = 'Job ' + job.status + progress + (job.message ? ': ' + job.message : '') + ' (following it)';
    var read = { headers: { prefer: 'wait=10' } };
    if (headers.authorization) read.headers.authorization = headers.authorization;
    fetch(base + '/v1/jobs/' + encodeURIComponent(job.job_id), read).then(function (response) {
      return response.json().then(function (next) {
        if (!response.ok) throw new Error(response.status + ' ' + ((next.error && next.error.message) || response.statusText));
        return next;
      });
    }).then(function (next) {
      show(next, view);
      if (isRunningJob(next)) return follow(next, headers, view);
      var failure = next.error_detail ? next.error_detail.type + ': ' + next.error_detail.message : next.error;
      view.status.textContent = 'Job ' + next.status + (failure ? ': ' + failure : '');
    }).catch(function (error) { view.status.textContent = 'Lost the job ' + job.job_id + ': ' + error.message; });
  }
  function isMedia(value) {
    return value !== null && typeof value === 'object' && typeof value.content === 'string' && 'content_type' in value;
  }
  function mediaIn(value, found) {
    if (isMedia(value)) found.push(value);
    else if (value !== null && typeof value === 'object') Object.keys(value).forEach(function (key) { mediaIn(value[key], found); });
    return found;
  }
  function show(value, view) {
    view.media.textContent = '';
    mediaIn(value, []).forEach(function (media, index) {
      var type = typeof media.content_type === 'string' ? media.content_type : 'application/octet-stream';
      var url = 'data:' + type + ';base64,' + media.content;
      if (type.indexOf('image/') === 0) {
        var image = element('img');
        image.alt = media.file_name || 'image ' + (index + 1);
        image.src = url;
        view.media.appendChild(image);
      }
      var link = element('a', 'Download ' + (media.file_name || 'file ' + (index + 1)) + ' (' + type + ')');
      link.href = url;
      link.download = media.file_name || 'file-' + (index + 1);
      view.media.appendChild(element('p')).appendChild(link);
    });
    view.output.textContent = JSON.stringify(value, function (key, item) {
      return key === 'content' && typeof item === 'string' && item.length > 120 && isMedia(this)
        ? item.slice(0, 40) + '... (' + item.length + ' characters of base64)'
        : item;
    }, 2);
  }
  keyInput.addEventListener('input', function () { refreshers.forEach(function (refresh) { refresh(); }); });
  fetch(base + '/openapi.json').then(function (response) { return response.json(); }).then(render)
    .catch(function (error) { list.textContent = 'Could not load openapi.json: ' + error.message; });
})();
`;
