# Sneakers' Maxretry handler, reproduced on Bunny (Sneakers itself is not
# packaged for Debian; Bunny is the client Sneakers runs on).
#
# Follows jondot/sneakers: lib/sneakers/handlers/maxretry.rb (master,
# 9780692): Maxretry.configure_queue (the worker queue dead-letters to
# {queue}-retry), Maxretry#initialize (topic exchanges {queue}-retry,
# {queue}-error and {queue}-retry-requeue; queue {queue}-retry with
# x-dead-letter-exchange {queue}-retry-requeue and x-message-ttl
# retry_timeout, bound with "#"; queue {queue}-error bound with "#"; the
# worker queue bound to {queue}-retry-requeue with "#"), #handle_retry
# (failures counted from the worker queue's x-death; reject while
# num_attempts <= retry_max_times, else publish the body to the error
# exchange with the delivery's routing key and one header, retry_info: JSON
# of error, num_attempts, failed_at, properties, error_class,
# error_message, backtrace; then ack) and #failure_count. The worker
# exchange and queue are declared as lib/sneakers/queue.rb#subscribe does
# with lib/sneakers/configuration.rb's defaults (exchange "sneakers",
# direct, durable; durable queue bound with its own name).
#
# The worker here fails every message with a RuntimeError, as a Sneakers
# worker whose work method raises does (lib/sneakers/worker.rb:
# process_work calls handler.error). It exits once every message has
# reached {queue}-error.
#
# Environment: CONFORMANCE_URL (AMQP URL with the vhost), CONFORMANCE_QUEUE,
# CONFORMANCE_COUNT (messages, ids "<queue>-<i>" as message_id and body),
# CONFORMANCE_RETRIES (retry_max_times), CONFORMANCE_RETRY_TIMEOUT_MS.
require 'bunny'
require 'json'
require 'time'

url = ENV.fetch('CONFORMANCE_URL')
queue_name = ENV.fetch('CONFORMANCE_QUEUE')
count = Integer(ENV.fetch('CONFORMANCE_COUNT'))
max_retries = Integer(ENV.fetch('CONFORMANCE_RETRIES'))
retry_timeout = Integer(ENV.fetch('CONFORMANCE_RETRY_TIMEOUT_MS'))

conn = Bunny.new(url, connection_name: 'ladder conformance sneakers')
conn.start
ch = conn.create_channel
ch.prefetch(10)

# lib/sneakers/queue.rb#subscribe with Maxretry.configure_queue.
worker_exchange = ch.exchange('sneakers', type: :direct, durable: true, auto_delete: false)
queue = ch.queue(queue_name, durable: true, auto_delete: false, exclusive: false,
                             arguments: { 'x-dead-letter-exchange' => "#{queue_name}-retry" })
queue.bind(worker_exchange, routing_key: queue_name)

# Maxretry#initialize (queue_options durable: true, so the exchanges too).
retry_name = "#{queue_name}-retry"
error_name = "#{queue_name}-error"
requeue_name = "#{queue_name}-retry-requeue"
retry_exchange, error_exchange, requeue_exchange = [retry_name, error_name, requeue_name].map do |name|
  ch.exchange(name, type: 'topic', durable: true)
end
retry_queue = ch.queue(retry_name, durable: true,
                                   arguments: { 'x-dead-letter-exchange' => requeue_name,
                                                'x-message-ttl' => retry_timeout })
retry_queue.bind(retry_exchange, routing_key: '#')
error_queue = ch.queue(error_name, durable: true)
error_queue.bind(error_exchange, routing_key: '#')
queue.bind(requeue_exchange, routing_key: '#')

# Maxretry#failure_count.
failure_count = lambda do |headers|
  next 0 if headers.nil? || headers['x-death'].nil?
  deaths = headers['x-death'].select { |d| d['queue'] == queue_name }
  if deaths.count > 0 && deaths.first['count']
    deaths.inject(0) { |sum, d| sum + d['count'] }
  else
    deaths.count
  end
end

failed = Queue.new
handle_retry = lambda do |hdr, props, msg, reason|
  num_attempts = failure_count.call(props[:headers]) + 1
  if num_attempts <= max_retries
    ch.reject(hdr.delivery_tag, false)
    next
  end
  data = {
    error: reason.to_s,
    num_attempts: num_attempts,
    failed_at: Time.now.iso8601,
    properties: props.to_hash
  }.tap do |hash|
    if reason.is_a?(Exception)
      hash[:error_class] = reason.class.to_s
      hash[:error_message] = reason.to_s
      hash[:backtrace] = reason.backtrace.take(10) if reason.backtrace
    end
  end
  if (retry_info = props[:headers]['retry_info'])
    old = (JSON.parse(retry_info) rescue { error: 'Failed to parse retry info' })
    data[:properties][:headers].delete('retry_info')
    data = Array(old).unshift(data)
  end
  error_exchange.publish(msg, routing_key: hdr.routing_key, headers: { retry_info: data.to_json })
  ch.acknowledge(hdr.delivery_tag, false)
  failed << props[:message_id]
end

queue.subscribe(manual_ack: true) do |hdr, props, msg|
  begin
    raise "could not send mail #{msg}"
  rescue StandardError => e
    handle_retry.call(hdr, props, msg, e)
  end
end

pub = conn.create_channel
pub.confirm_select
x = pub.exchange('sneakers', type: :direct, durable: true, auto_delete: false)
count.times do |i|
  id = "#{queue_name}-#{i}"
  x.publish(id, routing_key: queue_name, message_id: id, persistent: true)
end
pub.wait_for_confirms or abort('sneakers: a publish was not confirmed')

count.times { failed.pop }
conn.close
puts "sneakers: #{count} messages in #{error_name}"
