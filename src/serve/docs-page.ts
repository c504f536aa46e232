/**
 * The `/docs` page: a self-contained HTML page (no CDN, no bundled assets, so it works
 * offline and inside the image) that reads /openapi.json, lists every endpoint, and lets
 * a person send a request: a JSON body prefilled from the schema, or file inputs for
 * media parameters (sent as multipart). Data from the service is only ever set as text.
 */
export function renderDocsPage(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - API docs</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d1d1f; }
  h1 { font-size: 1.6rem; } .endpoint { border: 1px solid #ccc; border-radius: 6px; margin: 1rem 0; }
  .endpoint > summary { cursor: pointer; padding: .6rem .8rem; font-family: ui-monospace, monospace; }
  .method { display: inline-block; min-width: 4.5em; font-weight: bold; color: #0a6; }
  .body { padding: 0 .8rem .8rem; } textarea { width: 100%; min-height: 8rem; font-family: ui-monospace, monospace; }
  pre { background: #f4f4f4; padding: .6rem; overflow: auto; max-height: 24rem; white-space: pre-wrap; }
  label { display: block; margin: .4rem 0; } .status { font-weight: bold; }
</style>
</head>
<body>
<h1 id="title">${escapeHtml(title)}</h1>
<p>Endpoints of this service, from <a href="openapi.json">openapi.json</a>. Open one to try it.</p>
<label>API key, if the service needs one (sent as <code>Authorization: Bearer</code>, kept in this page only):
  <input id="api-key" type="password" autocomplete="off"></label>
<div id="endpoints">Loading...</div>
<script>
(function () {
  var list = document.getElementById('endpoints');
  var base = location.pathname.replace(/\\/docs\\/?$/, '');
  function element(tag, text, className) {
    var node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    if (className) node.className = className;
    return node;
  }
  function example(schema) {
    if (!schema || typeof schema !== 'object') return null;
    if ('default' in schema) return schema['default'];
    if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
    if (schema['enum']) return schema['enum'][0];
    var type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
    if (schema.anyOf) return example(schema.anyOf[0]);
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
  function render(spec) {
    document.title = spec.info.title + ' - API docs';
    document.getElementById('title').textContent = spec.info.title;
    list.textContent = '';
    Object.keys(spec.paths).forEach(function (path) {
      Object.keys(spec.paths[path]).forEach(function (method) {
        list.appendChild(renderOperation(path, method.toUpperCase(), spec.paths[path][method]));
      });
    });
    if (!list.children.length) list.textContent = 'This service has no endpoints.';
  }
  function renderOperation(path, method, operation) {
    var details = element('details', undefined, 'endpoint');
    details.dataset.path = path;
    var summary = element('summary');
    summary.appendChild(element('span', method, 'method'));
    summary.appendChild(document.createTextNode(' ' + path + '  ' + (operation.summary || '')));
    details.appendChild(summary);
    var body = element('div', undefined, 'body');
    if (operation.description) body.appendChild(element('p', operation.description));
    // An endpoint with file parameters has a multipart body: its binary parts become file inputs.
    var content = method === 'GET' ? null : operation.requestBody.content;
    var schema = content && (content['multipart/form-data'] || content['application/json']).schema;
    var properties = (schema && schema.properties) || {};
    var required = (schema && schema.required) || [];
    var fileInputs = {};
    var plain = {};
    Object.keys(properties).forEach(function (name) {
      var property = properties[name];
      var file = property.format === 'binary' ? property : property.type === 'array' && property.items && property.items.format === 'binary' ? property.items : null;
      if (file) {
        var label = element('label', name + (file === property ? ' (file): ' : ' (files): '));
        var input = element('input');
        input.type = 'file';
        input.name = name;
        input.multiple = file !== property;
        input.accept = file.contentMediaType || '';
        label.appendChild(input);
        body.appendChild(label);
        fileInputs[name] = input;
      } else if (required.indexOf(name) >= 0 || 'default' in property) {
        plain[name] = example(property);
      }
    });
    // A body's own example (a chat request's) beats one made up field by field.
    if (schema && Array.isArray(schema.examples) && schema.examples.length > 0) plain = schema.examples[0];
    var text = element('textarea');
    text.setAttribute('aria-label', 'request body for ' + path);
    if (method === 'GET') {
      var params = operation.parameters || [];
      var query = {};
      params.forEach(function (p) { query[p.name] = example(p.schema); });
      text.value = JSON.stringify(query, null, 2);
    } else {
      text.value = JSON.stringify(plain, null, 2);
    }
    body.appendChild(text);
    var send = element('button', 'Send');
    var status = element('p', '', 'status');
    var output = element('pre', '');
    send.addEventListener('click', function () { call(path, method, text, fileInputs, status, output); });
    body.appendChild(send);
    body.appendChild(status);
    body.appendChild(output);
    details.appendChild(body);
    return details;
  }
  function call(path, method, text, fileInputs, status, output) {
    var values;
    try { values = JSON.parse(text.value || '{}'); } catch (error) { status.textContent = 'The body is not valid JSON: ' + error.message; return; }
    var url = base + path;
    var init = { method: method, headers: {} };
    var names = Object.keys(fileInputs).filter(function (name) { return fileInputs[name].files.length; });
    var key = document.getElementById('api-key').value.trim();
    if (key) init.headers.authorization = 'Bearer ' + key;
    if (method === 'GET') {
      // As the gateway reads a query: null leaves the parameter to its default, a list repeats the key.
      var query = new URLSearchParams();
      Object.keys(values).forEach(function (name) {
        var value = values[name];
        if (value === null || value === undefined) return;
        (Array.isArray(value) ? value : [value]).forEach(function (item) {
          query.append(name, typeof item === 'string' ? item : JSON.stringify(item));
        });
      });
      url += '?' + query.toString();
    } else if (names.length) {
      var form = new FormData();
      Object.keys(values).forEach(function (key) {
        var value = values[key];
        form.append(key, typeof value === 'string' ? value : JSON.stringify(value));
      });
      names.forEach(function (name) {
        Array.prototype.forEach.call(fileInputs[name].files, function (file) { form.append(name, file); });
      });
      init.body = form;
    } else {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(values);
    }
    status.textContent = 'Sending...';
    fetch(url, init).then(function (response) {
      status.textContent = response.status + ' ' + response.statusText;
      return response.text();
    }).then(function (body) {
      try { output.textContent = JSON.stringify(JSON.parse(body), null, 2); } catch (error) { output.textContent = body; }
    }).catch(function (error) { status.textContent = 'Request failed: ' + error.message; });
  }
  fetch(base + '/openapi.json').then(function (response) { return response.json(); }).then(render)
    .catch(function (error) { list.textContent = 'Could not load openapi.json: ' + error.message; });
})();
</script>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
