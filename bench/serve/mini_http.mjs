// The ceiling: a bare node:http server answering POST /echo with the JSON it was sent, no
// validation and no worker. `node bench/serve/mini_http.mjs PORT`.
import { createServer } from 'node:http';

createServer((request, response) => {
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', () => {
    const body = Buffer.concat(parts);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    response.end(body);
  });
}).listen(Number(process.argv[2]), '127.0.0.1');
