<?php
// Symfony Messenger's AMQP transport with the Symfony Serializer, its retry
// strategy and its failure transport, reproduced on php-amqplib (Symfony
// runs on the php-amqp C extension, which Debian does not package with
// Messenger; what reaches the broker is the same).
//
// Follows symfony/amqp-messenger (7.0, e65375f):
// Transport/Connection.php: fromDsn (the DSN's path names the exchange,
// fanout, and its one queue of the same name, durable, bound with no key);
// publish/publishOnExchange (delivery_mode 2, timestamp, the headers given);
// publishWithDelay, setupDelay, createDelayQueue, getRoutingKeyForDelay (a
// retry waits in the queue named by queue_name_pattern
// "delay_%exchange_name%_%routing_key%_%delay%" + "_retry": durable,
// x-message-ttl the delay, x-expires the delay + 10 s, dead-lettering
// through the default exchange with the queue's name, bound to the direct
// exchange "delays" by its own name); get (basic.get); nack (no requeue).
// Transport/AmqpSender.php, Transport/AmqpStamp.php
// (createFromAmqpEnvelope: what is sent on from a received message keeps
// the received headers, x-death among them, the serializer's headers
// replacing theirs; with a RedeliveryStamp the routing key is the queue it
// was received from, a retry attempt).
// symfony/messenger (7.1, a391d2c): Transport/Serialization/Serializer.php
// (encode: the "type" header, one X-Message-Stamp-<class> header per stamp
// class holding the JSON array of its stamps, Content-Type becoming the
// content_type property); Worker.php (a failed message is rejected after
// the failure listeners ran); EventListener/AddErrorDetailsStampListener.php
// (an ErrorDetailsStamp unless the last one is the same error),
// EventListener/SendFailedMessageForRetryListener.php (DelayStamp and
// RedeliveryStamp(retryCount + 1) sent to the same transport),
// EventListener/SendFailedMessageToFailureTransportListener.php
// (SentToFailureTransportStamp, DelayStamp(0), RedeliveryStamp(0), sent to
// the failure transport); Retry/MultiplierRetryStrategy.php (delay *
// multiplier ** retries; jitter 0 here, so that each retry has one delay
// queue); Stamp/*.php and
// Transport/Serialization/Normalizer/FlattenExceptionNormalizer.php (the
// stamps' JSON fields).
//
// The transport "async" is amqp://…/messages; the failure transport is
// amqp://…/failed. The handler always throws the same RuntimeException.
// The message ids are in the body ({"invoiceId":"<queue>-<i>"}): Symfony
// sets no message_id. It exits once every message is in "failed".
//
// Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_COUNT,
// CONFORMANCE_RETRIES (max_retries), CONFORMANCE_DELAY_MS (the first
// delay; multiplier 2).

require_once '/usr/share/php/PhpAmqpLib/autoload.php';

use PhpAmqpLib\Connection\AMQPStreamConnection;
use PhpAmqpLib\Message\AMQPMessage;
use PhpAmqpLib\Wire\AMQPTable;

const STAMP = 'X-Message-Stamp-Symfony\\Component\\Messenger\\Stamp\\';
const MESSAGE_CLASS = 'App\\Message\\SendInvoice';

$url = parse_url(getenv('CONFORMANCE_URL'));
$count = (int) getenv('CONFORMANCE_COUNT');
$maxRetries = (int) getenv('CONFORMANCE_RETRIES');
$firstDelay = (int) getenv('CONFORMANCE_DELAY_MS');

$conn = new AMQPStreamConnection($url['host'], $url['port'] ?? 5672, rawurldecode($url['user']),
    rawurldecode($url['pass']), rawurldecode(substr($url['path'], 1)));
$ch = $conn->channel();
$ch->confirm_select();

// Connection::setupExchangeAndQueues for a transport named by its exchange.
function setupTransport($ch, string $name): void
{
    $ch->exchange_declare($name, 'fanout', false, true, false);
    $ch->queue_declare($name, false, true, false, false);
    $ch->queue_bind($name, $name, '');
}

// Serializer::encodeStamps: the stamps of each class, in the order their
// class first came, as one JSON array.
function encode(array $stamps): array
{
    $headers = ['type' => MESSAGE_CLASS];
    foreach ($stamps as $class => $list) {
        $headers[STAMP.$class] = json_encode($list, JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION);
    }

    return $headers;
}

function decode(array $headers): array
{
    $stamps = [];
    foreach ($headers as $name => $value) {
        if (str_starts_with($name, STAMP)) {
            $stamps[substr($name, strlen(STAMP))] = json_decode($value, true);
        }
    }

    return $stamps;
}

// Connection::publishOnExchange, with AmqpStamp::createFromAmqpEnvelope's
// attributes when sent on from a received message.
function publish($ch, string $exchange, string $key, string $body, array $headers, ?AMQPMessage $received): void
{
    $props = ['content_type' => 'application/json', 'delivery_mode' => 2, 'timestamp' => time()];
    if (null !== $received) {
        $old = $received->has('application_headers') ? $received->get('application_headers')->getNativeData() : [];
        $headers = array_merge($old, $headers);
        $props['timestamp'] = $received->get('timestamp');
    }
    $props['application_headers'] = new AMQPTable($headers);
    $ch->basic_publish(new AMQPMessage($body, $props), $exchange, $key);
    $ch->wait_for_pending_acks_returns(10);
}

// Connection::setupDelay and publishWithDelay for a retry attempt.
function publishForRetry($ch, string $queue, int $delay, string $body, array $headers, AMQPMessage $received): void
{
    $ch->exchange_declare('delays', 'direct', false, true, false);
    $name = sprintf('delay_%s_%s_%d', $queue, $queue, $delay).'_retry';
    $ch->queue_declare($name, false, true, false, false, false, new AMQPTable([
        'x-message-ttl' => $delay,
        'x-expires' => $delay + 10000,
        'x-dead-letter-exchange' => '',
        'x-dead-letter-routing-key' => $queue,
    ]));
    $ch->queue_bind($name, 'delays', $name);
    publish($ch, 'delays', $name, $body, $headers, $received);
}

function redeliveryStamp(int $retryCount): array
{
    return ['retryCount' => $retryCount, 'redeliveredAt' => (new DateTimeImmutable())->format(DateTimeInterface::RFC3339)];
}

function errorDetailsStamp(Throwable $e): array
{
    $trace = [['namespace' => '', 'short_class' => '', 'class' => '', 'type' => '', 'function' => '',
        'file' => $e->getFile(), 'line' => $e->getLine(), 'args' => []]];
    foreach ($e->getTrace() as $f) {
        $trace[] = ['namespace' => '', 'short_class' => '', 'class' => $f['class'] ?? '', 'type' => $f['type'] ?? '',
            'function' => $f['function'], 'file' => $f['file'] ?? null, 'line' => $f['line'] ?? null, 'args' => []];
    }

    return ['exceptionClass' => $e::class, 'exceptionCode' => $e->getCode(), 'exceptionMessage' => $e->getMessage(),
        'flattenException' => ['message' => $e->getMessage(), 'code' => $e->getCode(), 'headers' => [],
            'class' => $e::class, 'file' => $e->getFile(), 'line' => $e->getLine(), 'previous' => null,
            'status' => 500, 'status_text' => 'Internal Server Error', 'trace' => $trace,
            'trace_as_string' => $e->getTraceAsString()]];
}

function handle(array $invoice): void
{
    throw new RuntimeException(sprintf('Invoice %s: payment gateway refused', $invoice['invoiceId']));
}

setupTransport($ch, 'messages');
setupTransport($ch, 'failed');
$ch->exchange_declare('delays', 'direct', false, true, false);

// The application's dispatch: the bus names itself, the sender publishes.
for ($i = 0; $i < $count; ++$i) {
    $body = json_encode(['invoiceId' => "messages-$i"]);
    publish($ch, 'messages', '', $body, encode(['BusNameStamp' => [['busName' => 'messenger.bus.default']]]), null);
}

// messenger:consume async --sleep 0.05 (the default sleep is 1 s).
$failed = 0;
$deadline = microtime(true) + 60;
while ($failed < $count) {
    if (microtime(true) > $deadline) {
        fwrite(STDERR, "symfony: $failed of $count messages in failed after 60 s\n");
        exit(1);
    }
    $msg = $ch->basic_get('messages');
    if (null === $msg) {
        usleep(50000);
        continue;
    }
    $headers = $msg->get('application_headers')->getNativeData();
    $stamps = decode($headers);
    try {
        handle(json_decode($msg->getBody(), true));
        $msg->ack();
        continue;
    } catch (RuntimeException $e) {
    }
    $details = errorDetailsStamp($e);
    $previous = $stamps['ErrorDetailsStamp'] ?? [];
    $last = $previous ? end($previous) : null;
    if (null === $last || $last['exceptionClass'] !== $details['exceptionClass'] || $last['exceptionCode'] !== $details['exceptionCode']
        || $last['exceptionMessage'] !== $details['exceptionMessage']) {
        $stamps['ErrorDetailsStamp'][] = $details;
    }
    $redeliveries = $stamps['RedeliveryStamp'] ?? [];
    $retries = $redeliveries ? end($redeliveries)['retryCount'] : 0;
    if ($retries < $maxRetries) {
        $delay = $firstDelay * 2 ** $retries;
        $stamps['DelayStamp'][] = ['delay' => $delay];
        $stamps['RedeliveryStamp'][] = redeliveryStamp($retries + 1);
        publishForRetry($ch, 'messages', $delay, $msg->getBody(), encode($stamps), $msg);
    } else {
        $stamps['SentToFailureTransportStamp'][] = ['originalReceiverName' => 'async'];
        $stamps['DelayStamp'][] = ['delay' => 0];
        $stamps['RedeliveryStamp'][] = redeliveryStamp(0);
        publish($ch, 'failed', 'messages', $msg->getBody(), encode($stamps), $msg);
        ++$failed;
    }
    $msg->nack(false);
}
$ch->close();
$conn->close();
echo "symfony: $count messages in failed\n";
