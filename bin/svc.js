#!/usr/bin/env node
import '../dist/svc.js';
