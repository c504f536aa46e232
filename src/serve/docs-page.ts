/**
 * The `/docs` page: a self-contained HTML page (no CDN, no bundled assets, so it works
 * offline and inside the image) that reads /openapi.json, lists every endpoint, and lets
 * a person send a request: a JSON body prefilled from the schema, or file inputs for
 * media parameters (sent as multipart). A job (serverless compute) is followed until it
 * ends; images in a result are shown, and every media file can be downloaded, its base64
 * shortened in the text. Data from the service is only ever set as text, or as a data
 * URL's bytes.
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
  .media img { display: block; max-width: 100%; max-height: 24rem; margin: .4rem 0; border: 1px solid #ccc; }
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
  // A file part: binary itself, or the binary member of the toolkit's upload-or-FileModel union.
  function uploadOf(schema) {
    if (schema.format === 'binary') return schema;
    return (schema.anyOf || []).filter(function (member) { return member.format === 'binary'; })[0] || null;
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
      var single = uploadOf(property);
      var file = single || (property.type === 'array' && property.items ? uploadOf(property.items) : null);
      if (file) {
        var label = element('label', name + (single ? ' (file): ' : ' (files): '));
        var input = element('input');
        input.type = 'file';
        input.name = name;
        input.multiple = !single;
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
    var view = { status: element('p', '', 'status'), media: element('div', undefined, 'media'), output: element('pre', '') };
    send.addEventListener('click', function () { call(path, method, text, fileInputs, view); });
    body.appendChild(send);
    body.appendChild(view.status);
    body.appendChild(view.media);
    body.appendChild(view.output);
    details.appendChild(body);
    return details;
  }
  function call(path, method, text, fileInputs, view) {
    var status = view.status;
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
