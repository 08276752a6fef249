#!/usr/bin/env node
// A Wizard Arena bot in Node.js, written from proto/wizard_arena/v1/arena.proto
// alone: the .proto is loaded at run time with @grpc/proto-loader, and every
// decision is taken from the DecisionRequest (its legal actions), so the bot
// keeps no game state of its own.
//
//   node bot.js --server 127.0.0.1:50051 --name node-bot [--games N] [--token T]
//   (the token defaults to $WIZARD_ARENA_TOKEN, as a tournament or ladder sets it)
//               [--rule-options hidden_bids,tricksy_suited,...] [--events lean|all]
//
// Strategy: the lowest legal bid, a random legal card, the first legal trump.
// The random draws come from GameStarted.botSeed (a per-game seed the referee
// derives from its secret, the game id and the seat), so the same game is
// played the same way every time; never from Math.random.
// Every decision comes from the request's legal actions, so the bot can play
// every rule option; it lists in Hello.ruleOptions those given with
// --rule-options (none by default: the base game only). It needs no public
// event, so it asks for the lean stream (protocol v1.1, Hello.eventStream
// EVENT_STREAM_LEAN: about one message per decision); --events all asks
// for every event (a v1.0 server sends them all anyway). It asks for clock
// probes (protocol v1.2, Hello.clockProbes) and answers each at once, so the
// referee credits the network's round trip on its deadlines
// (DecisionRequest.networkCreditMs; an older server sends no probe).
// Exit status: 0 after N games (or when the server ends the stream), 1 when the
// server refuses or drops the bot, 2 for bad arguments, 130 on Ctrl-C.
'use strict';

const crypto = require('node:crypto');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const PROTO = path.resolve(__dirname, '..', '..', 'proto', 'wizard_arena', 'v1', 'arena.proto');
const SDK_NAME = 'wizard-arena-node-example';
const SDK_VERSION = require('./package.json').version;
const PROTOCOL_VERSION = 1;

function usage(message) {
  if (message) console.error(`node-bot: error: ${message}`);
  console.error(
    'usage: node bot.js --server HOST:PORT --name NAME [--games N] [--token TOKEN] ' +
      '[--rule-options NAME,NAME,...] [--events lean|all]',
  );
  process.exit(2);
}

function parseArgs(argv) {
  const args = {
    server: '127.0.0.1:50051',
    name: 'node-bot',
    games: 0,
    token: process.env.WIZARD_ARENA_TOKEN || '', // (argv is seen by 'ps')
    ruleOptions: [],
    events: 'lean',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === '-h' || flag === '--help') usage();
    const value = argv[i + 1];
    if (!['--server', '--name', '--games', '--token', '--rule-options', '--events'].includes(flag)) {
      usage(`unknown option ${flag}`);
    }
    if (value === undefined) usage(`${flag} needs a value`);
    i++;
    if (flag === '--games') {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 1) usage('--games must be a positive integer');
      args.games = n;
    } else if (flag === '--events') {
      if (!['lean', 'all'].includes(value)) usage('--events must be lean or all');
      args.events = value;
    } else if (flag === '--rule-options') {
      // the Rules option names, as in the .proto (e.g. tricksy_suited); no check
      // here: the server refuses the bot if one in force at its tables is missing
      args.ruleOptions = value.split(',').map((o) => o.trim()).filter((o) => o);
    } else {
      args[flag.slice(2)] = value;
    }
  }
  return args;
}

// A seeded generator of floats in [0, 1): SplitMix64 on BigInt. The seed is
// GameStarted.botSeed as a decimal string (uint64, loaded with longs: String);
// "0" (a server that gives no seed) draws a random one.
function seededRandom(seedText) {
  let state = BigInt(seedText || '0');
  if (state === 0n) state = crypto.randomBytes(8).readBigUInt64BE();
  const mask = (1n << 64n) - 1n;
  return function next() {
    state = (state + 0x9e3779b97f4a7c15n) & mask;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & mask;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & mask;
    z ^= z >> 31n;
    return Number(z >> 11n) / 2 ** 53;
  };
}

// The decision, from the request alone; random() draws the random card.
function decide(req, random) {
  const action = { requestId: req.requestId };
  switch (req.kind) {
    case 'DECISION_KIND_BID':
      action.bid = Math.min(...req.legalBids);
      break;
    case 'DECISION_KIND_PLAY':
      // sent back as received: with tricksy_suited a Wizard's wizardSuit is its identity
      action.card = req.legalCards[Math.floor(random() * req.legalCards.length)];
      break;
    case 'DECISION_KIND_CHOOSE_TRUMP':
      action.trump = req.legalSuits[0];
      break;
    default:
      throw new Error(`unknown decision kind ${req.kind}`);
  }
  return action;
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  const definition = protoLoader.loadSync(PROTO, {
    keepCase: false, // fields in lowerCamelCase: requestId, legalCards, ...
    enums: String, // enum values as their names: 'DECISION_KIND_BID', 'SUIT_SPADES'
    longs: String, // 64-bit integers (GameStarted.botSeed) as decimal strings
    defaults: true,
    oneofs: true, // a oneof's set member is named in e.g. msg.message
  });
  const { WizardArena } = grpc.loadPackageDefinition(definition).wizard_arena.v1;
  const client = new WizardArena(args.server, grpc.credentials.createInsecure());
  const call = client.Play();
  let gamesDone = 0;
  let decisions = 0;
  let finished = false;
  let lastRequest = null;
  const randoms = new Map(); // game id -> the seeded generator of that game
  const randomFor = (gameId) => {
    if (!randoms.has(gameId)) randoms.set(gameId, seededRandom('0')); // joined mid-game
    return randoms.get(gameId);
  };

  const log = (text) => console.error(`[${args.name}] ${text}`);

  call.write({
    hello: {
      minVersion: PROTOCOL_VERSION,
      maxVersion: PROTOCOL_VERSION,
      botName: args.name,
      token: args.token,
      sdkName: SDK_NAME,
      sdkVersion: SDK_VERSION,
      ruleOptions: args.ruleOptions,
      eventStream: args.events === 'all' ? 'EVENT_STREAM_ALL' : 'EVENT_STREAM_LEAN',
      clockProbes: true,
    },
  });

  call.on('data', (msg) => {
    // A clock probe is answered at once, before anything else: the referee
    // times its round trip (it sends none while a request is open).
    if (msg.message === 'clockProbe') {
      if (!call.writableEnded) call.write({ clockProbeReply: { id: msg.clockProbe.id } });
      return;
    }
    // After the last game the stream is half-closed; the server may already have
    // seated the bot at another table: ignore everything until the stream ends.
    if (finished) return;
    switch (msg.message) {
      case 'welcome':
        log(
          `connected to ${args.server}: protocol ${msg.welcome.version}.${msg.welcome.minorVersion}, ` +
            `session ${msg.welcome.sessionId}, ${msg.welcome.eventStream}` +
            (msg.welcome.clockProbes ? ', clock probes' : ''),
        );
        break;
      case 'gameStarted': {
        const g = msg.gameStarted;
        log(`game ${g.gameId}: seat ${g.yourSeat} of ${g.seatNames.join(', ')}`);
        if (!randoms.has(g.gameId)) randoms.set(g.gameId, seededRandom(g.botSeed)); // (a resumed game keeps its own)
        break;
      }
      case 'decisionRequest': {
        decisions++;
        lastRequest = msg.decisionRequest;
        call.write({ action: decide(lastRequest, randomFor(lastRequest.gameId)) });
        break;
      }
      case 'actionRejected': {
        const r = msg.actionRejected;
        log(`action rejected (${r.reason}): ${r.message}`);
        // the request stays open while time is left: answer once more
        if (lastRequest && r.requestId === lastRequest.requestId && r.timeLeftMs > 0) {
          const req = lastRequest;
          lastRequest = null;
          const first = { ...req, legalCards: req.legalCards.slice(0, 1) };
          call.write({ action: decide(first, randomFor(req.gameId)) });
        }
        break;
      }
      case 'gameOver': {
        const o = msg.gameOver;
        // seat is known from GameStarted; the totals and ranks are by seat
        log(`game ${o.gameId} over: totals ${o.totals.join(' ')}, ranks ${o.ranks.join(' ')}`);
        randoms.delete(o.gameId);
        gamesDone++;
        if (args.games && gamesDone >= args.games) {
          finished = true;
          call.end(); // half-close: the server ends the stream
        }
        break;
      }
      default:
        break; // public events (bids, cards, tricks, scores; only with --events all): not needed
    }
  });

  call.on('error', (err) => {
    // once the games are played, how the stream ended does not matter
    if (!finished) {
      log(`stream ended: ${grpc.status[err.code] || err.code}: ${err.details}`);
      process.exitCode = 1;
    }
    client.close();
  });

  call.on('end', () => {
    log(`done: ${gamesDone} game(s), ${decisions} decisions`);
    client.close();
  });

  process.on('SIGINT', () => {
    log('interrupted');
    finished = true;
    call.cancel();
    client.close();
    process.exit(130);
  });
}

module.exports = { decide, seededRandom };

if (require.main === module) main();
